"""A telegraphic query and its date → the entity it is about (against the graph, with a popularity prior and
ambiguity reported) and the reformulated query NEON retrieves with: "(Date: August 31, 2023) Doja Cat"."""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass, field

import pendulum
from rapidfuzz import fuzz, process, utils

from core.timeaxes import day_iso, day_key
from extract.entities.names import name_key
from graph.store.store import GraphStore

FILLER = re.compile(r"\b(news|latest|update[sd]?|today|now|what happened (to|with)|what is|who is|about|"
                    r"recent(ly)?|headlines?|story|stories|the)\b", re.I)
AMBIGUITY_MARGIN = 0.08  # runner-up within 8% of the winner's score: report, do not guess silently


@dataclass
class EntityChoice:
    id: str
    name: str
    type: str
    score: float
    interactions: int


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
    """Names and aliases are looked up in an in-memory copy of the graph's entities, refreshed every
    `refresh_s`; a name the copy does not know yet is looked up in the graph itself, so a brand-new entity is
    found at once (the endpoint stays current) while the common case costs no query."""

    def __init__(self, store: GraphStore, candidates: int = 2000, refresh_s: float = 30.0):
        self.store = store
        self.candidates = candidates
        self.refresh_s = refresh_s
        self._names: dict[str, list[EntityChoice]] = {}
        self._loaded_at = float("-inf")
        self._lock = threading.Lock()

    def _known(self, key: str) -> list[EntityChoice]:
        with self._lock:
            if time.monotonic() - self._loaded_at > self.refresh_s:
                self._names = self._load()
                self._loaded_at = time.monotonic()
            return self._names.get(key, [])

    def _load(self) -> dict[str, list[EntityChoice]]:
        names: dict[str, list[EntityChoice]] = {}
        for row in self.store.entities():
            choice = EntityChoice(row["id"], row["name"], row["type"], 100.0, row["mentions"])
            for form in {row["name"], *(row["aliases"] or [])}:
                names.setdefault(name_key(form), []).append(choice)
        return names

    def resolve(self, mention: str) -> tuple[EntityChoice | None, list[EntityChoice]]:
        choices = list(self._known(name_key(mention)))
        if not choices:
            exact = self.store.find_entities(mention, limit=5)
            choices = [EntityChoice(r["id"], r["name"], r["type"], 100.0, r["interactions"]) for r in exact]
        if not choices:
            choices = self._fuzzy(mention)
        if not choices:
            return None, []
        ranked = sorted(choices, key=lambda c: (-self._prior(c), c.id))
        best = ranked[0]
        close = [c for c in ranked[1:] if self._prior(c) >= self._prior(best) * (1 - AMBIGUITY_MARGIN)]
        return best, close

    def _prior(self, choice: EntityChoice) -> float:
        return choice.score * (1 + math.log1p(choice.interactions) / 10)  # popular entities win near-ties

    def _fuzzy(self, mention: str) -> list[EntityChoice]:
        rows = self.store.top_entities(self.candidates)
        by_name = {r["name"]: r for r in rows}
        hits = process.extract(mention, list(by_name), scorer=_name_score, processor=utils.default_process,
                               score_cutoff=75, limit=5)
        return [EntityChoice(by_name[name]["id"], name, by_name[name]["type"], score, by_name[name]["interactions"])
                for name, score, _ in hits]


def _name_score(a: str, b: str, **_: object) -> float:
    """Whole-name agreement first ("john ford" → "John M. Ford" over "Ford"); a partial match ("doja" in
    "Doja Cat") counts at a discount."""
    return max(fuzz.token_sort_ratio(a, b), 0.85 * fuzz.partial_ratio(a, b))


def parse_query(query: str, date: str, resolver: EntityResolver) -> ParsedQuery:
    mention = mention_of(query)
    entity, alternatives = resolver.resolve(mention)
    return ParsedQuery(query, day_key(date), mention, entity, alternatives)
