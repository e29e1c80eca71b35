"""A telegraphic query and its date → the entity it is about (against the graph, with a popularity prior and
ambiguity reported) and the reformulated query NEON retrieves with: "(Date: August 31, 2023) Doja Cat"."""

from __future__ import annotations

import math
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import pendulum
from rapidfuzz import fuzz, process, utils

from core.timeaxes import day_iso, day_key
from extract.entities.names import name_key
from graph.store.asof import AsOf, Knowledge
from graph.store.store import GraphStore

FILLER = re.compile(r"\b(news|latest|update[sd]?|today|now|what happened (to|with)|what is|who is|about|"
                    r"recent(ly)?|headlines?|story|stories|the)\b", re.I)
AMBIGUITY_MARGIN = 0.08  # runner-up within 8% of the winner's score: report, do not guess silently


@dataclass
class EntityChoice:
    id: str
    name: str
    type: str
    score: float  # name agreement, 0-100
    interactions: int  # as of the query day, like mentions
    mentions: int = 0


Resolution = tuple[EntityChoice | None, list[EntityChoice]]  # (best, close runners-up)


@dataclass
class ParsedQuery:
    text: str
    day: int
    mention: str
    entity: EntityChoice | None
    alternatives: list[EntityChoice] = field(default_factory=list)

    @property
    def date_words(self) -> str:
        return pendulum.parse(day_iso(self.day)).format("MMMM D, YYYY")

    @property
    def reformulated(self) -> str:
        subject = self.entity.name if self.entity else self.mention
        return f"(Date: {self.date_words}) {subject}"


def mention_of(query: str) -> str:
    """The entity part of a telegraphic query: filler words and punctuation off."""
    stripped = FILLER.sub(" ", query)
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s'’.&-]", " ", stripped)).strip() or query.strip()


class EntityResolver:
    """Resolution as of the query day: only entities a chunk visible that day mentions are candidates, ranked by
    name agreement and their popularity then (graph/store/asof.py), so `entity` and `alternatives` never name an
    entity first seen later.

    Names and aliases → entity ids come from an in-memory copy of the graph's name index, refreshed every
    `refresh_s` (names carry no time, so one copy serves every day); a name the copy does not know yet is looked
    up in the graph itself, so a brand-new entity is found at once. Which candidates existed on the day, and how
    popular they were, is read from the graph; the outcome is cached per (as-of day, view, name) for `refresh_s`,
    so the common case (many askers, one day) costs no query."""

    def __init__(self, store: GraphStore, candidates: int = 2000, refresh_s: float = 30.0,
                 cache_size: int = 4096):
        self.store = store
        self.candidates = candidates
        self.refresh_s = refresh_s
        self.cache_size = cache_size
        self._names: dict[str, list[str]] = {}
        self._loaded_at = float("-inf")
        self._resolved: OrderedDict[tuple[int, str, str], tuple[float, Resolution]] = OrderedDict()
        self._lock = threading.Lock()

    def resolve(self, mention: str, as_of: AsOf | int | str | None = None) -> Resolution:
        """(best, close runners-up) among the entities known as of the day (None: the graph as it stands)."""
        as_of = AsOf.of(as_of)
        key = (as_of.day, as_of.knowledge, name_key(mention))
        with self._lock:
            cached = self._resolved.get(key)
            if cached and time.monotonic() - cached[0] <= self.refresh_s:
                self._resolved.move_to_end(key)
                return cached[1]
        resolution = self._rank(self._candidates(mention, key[2], as_of))
        with self._lock:
            self._resolved[key] = (time.monotonic(), resolution)
            while len(self._resolved) > self.cache_size:
                self._resolved.popitem(last=False)
        return resolution

    def _candidates(self, mention: str, key: str, as_of: AsOf) -> list[EntityChoice]:
        rows = self.store.entities_as_of(self._known(key), as_of)
        if not rows:
            rows = self.store.find_entities(mention, limit=5, as_of=as_of)
        if rows:
            return [_choice(r, 100.0) for r in rows]
        return self._fuzzy(mention, as_of)

    def _rank(self, choices: list[EntityChoice]) -> Resolution:
        if not choices:
            return None, []
        ranked = sorted(choices, key=lambda c: (-self._prior(c), c.id))
        best = ranked[0]
        close = [c for c in ranked[1:] if self._prior(c) >= self._prior(best) * (1 - AMBIGUITY_MARGIN)]
        return best, close

    def _known(self, key: str) -> list[str]:
        with self._lock:
            if time.monotonic() - self._loaded_at > self.refresh_s:
                self._names = self._load()
                self._loaded_at = time.monotonic()
            return self._names.get(key, [])

    def _load(self) -> dict[str, list[str]]:
        names: dict[str, list[str]] = {}
        for row in self.store.entities():
            for form in {row["name"], *(row["aliases"] or [])}:
                names.setdefault(name_key(form), []).append(row["id"])
        return names

    def _prior(self, choice: EntityChoice) -> float:
        return choice.score * (1 + math.log1p(choice.mentions) / 10)  # popular entities win near-ties

    def _fuzzy(self, mention: str, as_of: AsOf) -> list[EntityChoice]:
        rows = self.store.top_entities(self.candidates, as_of)
        by_name = {r["name"]: r for r in rows}
        hits = process.extract(mention, list(by_name), scorer=_name_score, processor=utils.default_process,
                               score_cutoff=75, limit=5)
        scores = {by_name[name]["id"]: score for name, score, _ in hits}
        return [_choice(r, scores[r["id"]]) for r in self.store.entities_as_of(list(scores), as_of)]


def _choice(row: dict, score: float) -> EntityChoice:
    return EntityChoice(row["id"], row["name"], row["type"], score, row["interactions"], row["mentions"])


def _name_score(a: str, b: str, **_: object) -> float:
    """Whole-name agreement first ("john ford" → "John M. Ford" over "Ford"); a partial match ("doja" in
    "Doja Cat") counts at a discount."""
    return max(fuzz.token_sort_ratio(a, b), 0.85 * fuzz.partial_ratio(a, b))


def parse_query(query: str, date: str, resolver: EntityResolver, knowledge: Knowledge = "ingested") -> ParsedQuery:
    """The query's entity as of its date, in the given view (the strict `ingested` one unless asked)."""
    mention = mention_of(query)
    day = day_key(date)
    entity, alternatives = resolver.resolve(mention, AsOf(day, knowledge))
    return ParsedQuery(query, day, mention, entity, alternatives)
