"""A telegraphic query and its date → the entity it is about (against the graph, with a popularity prior and
ambiguity reported) and the reformulated query NEON retrieves with: "(Date: August 31, 2023) Doja Cat"."""

from __future__ import annotations

import copy
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt
from rapidfuzz import fuzz, process, utils

from newskg.core.timeaxes import day_from_key, day_key, day_words, end_of_day_ms
from newskg.extract.entities.evidence import LEGAL_FORMS, first_names
from newskg.extract.entities.names import CALENDAR_WORDS, name_key
from newskg.graph.store.asof import AsOf, Knowledge
from newskg.graph.store.rows import AliasSeen, EntityCounts, EntityName, EntityProfileRow
from newskg.graph.store.rows import Cell as DayCell
from newskg.graph.store.store import GraphStore
from newskg.qa.dates import find_date
from newskg.qa.similarity import QueryTexts

FILLER = re.compile(
    r"\b(news|latest|update[sd]?|today|now|what happened (to|with)|what is|who is|about|"
    r"recent(ly)?|headlines?|story|stories|the)\b",
    re.I,
)
AMBIGUITY_MARGIN = 0.08  # runner-up within 8% of the winner's score: report, do not guess silently
FUZZY_CUTOFF, FUZZY_LIMIT = 75.0, 5  # a fuzzy name match scores at least this; at most this many are weighed
FUZZY_BATCH = 25  # fuzzy hits checked against the day per query
PARTIAL_WEIGHT = 0.85  # a partial match ("doja" in "Doja Cat") counts at this discount
# A name or query this short (characters, after rapidfuzz's default processing) is matched exactly or not at all:
# one or two letters are found inside almost any text ("e" in "tng50 universe simulation" scored 85).
MIN_FUZZY_CHARS = 3
# A multi-word name found in the query ("Google Stadia") yields to the entity named by its last word(s) ("Stadia")
# when that one, of the same type, is at least this many times as present as of the day (chunks + facts): the
# extractor kept a maker-qualified variant of a name apart, and the well-known entity is what the query means.
SUFFIX_DOMINANCE = 5
# The leading words of a longer name stand for it from this many words on: "columbus police" is the department,
# but one word ("columbus") is a name of its own or nothing.
MIN_PREFIX_WORDS = 2
# What a user leaves off the end of an organisation's name: its legal form or the kind of body it is.
LEFT_OFF_WORDS = LEGAL_FORMS | frozenset(
    {"department", "dept", "agency", "office", "council", "commission", "committee", "board", "authority", "bureau"}
    | {"ministry", "service", "services"}
)
CONNECTORS = frozenset({"of", "the", "and", "for", "de", "la", "du", "der", "&"})


@dataclass
class EntityChoice:
    id: str
    name: str
    type: str
    score: float  # name agreement, 0-100
    interactions: int  # as of the query day, like mentions
    mentions: int = 0


Resolution = tuple[EntityChoice | None, list[EntityChoice]]  # (best, close runners-up)
Row = dict[str, Any]  # a graph read's row (graph/store/reads.py)
Cell = tuple[int, int, int]  # (publication day, end of the ingestion day in ms, how many items share them)
# A name key's entry in the name index: entity id → None when the key is the entity's name (it exists as the entity
# does), else the (publication day, ingestion ms) of each alias spelling with that key (graph/store/writes.ENTITIES).
Forms = dict[str, tuple[tuple[int, int], ...] | None]
# What the name index holds of an entity: its name and its aliases as (spelling, day, ingestion ms), sorted.
Record = tuple[str, tuple[AliasSeen, ...]]
# A refresh reads the entities whose names were stamped since this long before the previous refresh's read began
# (by the graph server's clock): a write whose transaction began before that read, and committed after it, carries
# a stamp from before the read, and a cluster's servers may disagree by a little (see _NameIndex.refreshed).
NAMES_MARGIN_MS = 60_000
# A whole read now and then all the same: on Neo4j a stamp is taken when its statement runs, not when its transaction
# commits, so a batch committed more than NAMES_MARGIN_MS after it (lock waits, a pause) would be missed by every
# refresh until the next whole read. FalkorDB runs writes one at a time: there it is only a safety net.
NAMES_REREAD_S = 600.0


def _ids_as_of(forms: Forms | None, as_of: AsOf) -> list[str]:
    """The entities a key names as of the day: by their name, or by an alias visible then (reads.visible)."""
    if not forms:
        return []
    last_day, last_ms = as_of.day, as_of.ms
    return [
        entity_id
        for entity_id, seen in forms.items()
        if seen is None or any(day <= last_day and ms <= last_ms for day, ms in seen)
    ]


def _add_form(table: dict[str, Forms], key: str, entity_id: str, seen: tuple[int, int] | None) -> None:
    forms = table.setdefault(key, {})
    if seen is None or (entity_id in forms and forms[entity_id] is None):
        forms[entity_id] = None  # a name: visible as the entity is, whatever its aliases
    else:
        forms[entity_id] = (*(forms.get(entity_id) or ()), seen)


@dataclass(frozen=True)
class EntityProfile:
    """An entity's chunks and interactions grouped by (publication day, end of the ingestion day), from one graph read
    (graph/store/reads.ENTITY_PROFILES): its existence and popularity as of any day and view follow from the cells
    by the one as-of rule (graph/store/reads.visible), exactly as ENTITY_VISIBLE counts them."""

    id: str
    name: str
    type: str
    chunk_cells: tuple[Cell, ...]
    interaction_cells: tuple[Cell, ...]

    @classmethod
    def of_row(cls, row: EntityProfileRow) -> EntityProfile:
        return cls(row.id, row.name, row.type, _ending_days(row.chunk_cells), _ending_days(row.interaction_cells))

    def as_of(self, as_of: AsOf) -> EntityCounts | None:
        """The entity as ENTITIES_AS_OF returns it for that day and view, or None when nothing visible names it."""
        mentions, interactions = _visible_count(self.chunk_cells, as_of), _visible_count(self.interaction_cells, as_of)
        if not mentions and not interactions:
            return None
        return EntityCounts(self.id, self.name, self.type, mentions, interactions)


def _ending_days(cells: list[DayCell]) -> tuple[Cell, ...]:
    """The graph's cells with each ingestion day as its last millisecond, the bound AsOf.ms compares with."""
    return tuple((day, end_of_day_ms(ingested_day), n) for day, ingested_day, n in cells)


def _visible_count(cells: tuple[Cell, ...], as_of: AsOf) -> int:
    """Items published on or before the day and ingested by as_of.ms (the end of the day; no bound when the view
    is by publication only)."""
    last_day, last_ms = as_of.day, as_of.ms  # AsOf.ms is computed on each access: once per count
    return sum(n for day, ms, n in cells if day <= last_day and ms <= last_ms)


@dataclass
class ParsedQuery:
    """A query, its day (a date written in it, else the day it was asked; never after that), the words that
    named the entity, the entity as of the day, and the query's other words ("layoffs" in "Doja Cat layoffs"):
    those reach retrieval and the answer through `reformulated` and `texts`."""

    text: str
    day: int
    mention: str
    entity: EntityChoice | None
    alternatives: list[EntityChoice] = field(default_factory=list[EntityChoice])
    topic: str = ""
    asked_day: int | None = None  # the day the query was asked, when a date in it moved the query day

    @property
    def date_words(self) -> str:
        return day_words(self.day)

    @property
    def reformulated(self) -> str:
        """NEON's REFORM(t_q, q): the date in words, the entity's canonical name, the query's own words."""
        subject = self.entity.name if self.entity else self.mention
        return " ".join(part for part in (f"(Date: {self.date_words})", subject, self.topic) if part)

    @property
    def texts(self) -> QueryTexts:
        return QueryTexts(self.text, self.reformulated, self.topic)


def clean(query: str) -> str:
    """A telegraphic query with filler words and punctuation off."""
    stripped = FILLER.sub(" ", query)
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s'’.&-]", " ", stripped)).strip(" .")


def mention_of(query: str) -> str:
    """The entity part of a telegraphic query when nothing better is known: filler words and punctuation off."""
    return clean(query) or query.strip()


def leading_words(key: str) -> list[str]:
    """The runs of MIN_PREFIX_WORDS or more leading words of a name key that leave off only an organisation's
    generic end ("columbus police department" → ["columbus police"]) and do not end on a connector. What is left
    off must not tell the name apart, nor name a place or a title: "samsung galaxy" is no name of "Samsung Galaxy
    Note", "washington state" none of "Washington State University", "new york" none of "New York Times"."""
    words = key.split()
    return [
        " ".join(words[:n])
        for n in range(MIN_PREFIX_WORDS, len(words))
        if words[n - 1] not in CONNECTORS and all(w in LEFT_OFF_WORDS for w in words[n:])
    ]


def spans(words: list[str]) -> list[tuple[int, int]]:
    """Every contiguous run of words as (start, end), leftmost first, then longest: a telegraphic query leads
    with its entity, and what follows may name another ("taylor swift american music awards" is about Taylor
    Swift; longest-first picked the awards)."""
    n = len(words)
    return [(start, end) for start in range(n) for end in range(n, start, -1)]


class EntityResolver:
    """Resolution as of the query day: only entities a chunk or interaction visible that day names are candidates
    (graph/store/reads.ENTITY_VISIBLE), ranked by name agreement and their popularity then, so `entity` and
    `alternatives` never name an entity first seen later.

    Names and aliases → entity ids come from an in-memory copy of the graph's name index, refreshed every
    `refresh_s` with the entities whose names changed since (_NameIndex.refreshed); one copy serves every day: an
    alias carries the times of the record visible first that showed it, and counts as of a day only when visible
    then (so an alias first seen after the day neither resolves nor decides which words of a query name the entity);
    a name the copy does not know yet is looked up in the graph itself (aliases as of the day there too), so a
    brand-new entity is found at once. Which candidates existed on the day, and how popular they were, is read from
    the graph; the outcome is cached per (as-of day, view, name) for `refresh_s`, so the common case (many askers,
    one day) costs no query. Those facts come from each candidate's EntityProfile, kept per entity for `refresh_s`
    (one batched read for the ids without a fresh one), so asking about the same entity on another day costs no
    query either. A name no entity of the day carries is matched fuzzily: every entity name scoring at least
    FUZZY_CUTOFF, then only those of the day, best 5. (Not the best 5 names first: whether a similar name exists
    later must not change an answer about earlier.)"""

    def __init__(
        self, store: GraphStore, refresh_s: float = 30.0, cache_size: int = 4096, profile_cache_size: int = 16384
    ):
        self.store = store
        self.refresh_s = refresh_s
        self._names_index: _NameIndex | None = None  # swapped whole by a refresh, never changed in place
        self._resolved = _Recent(refresh_s, cache_size)  # (day, view, name key) → Resolution
        self._profiles = _Recent(refresh_s, profile_cache_size)  # entity id → EntityProfile
        self._refreshing = threading.Lock()  # one reader rebuilds a stale index; the others keep the old one

    def resolve(self, mention: str, as_of: AsOf | int | str | None = None) -> Resolution:
        """(best, close runners-up) among the entities known as of the day (None: the graph as it stands)."""
        as_of = AsOf.of(as_of)
        key = (as_of.day, as_of.knowledge, name_key(mention))
        resolution = self._resolved.get(key)
        if resolution is None:
            resolution = self._rank(self._candidates(mention, key[2], as_of))
            self._resolved.put(key, resolution)
        return resolution

    def find(self, query: str, as_of: AsOf | int | str | None = None) -> tuple[str, str, Resolution]:
        """(mention, the query's other words, resolution): the leftmost, then longest, run of the query's words
        that is an entity's name or alias visible as of the day ("Doja Cat" in "Doja Cat layoffs"), or the leading
        words (two or more) of one that leave off only an organisation's generic end ("columbus police" of
        "Columbus Police Department": a user drops it, and the longer run says more than "Columbus" alone);
        a whole name found is replaced by the entity its last word(s) name when that one dominates the day
        (_dominant_suffix). A person's full name the query gives is never answered with someone else sharing one
        of its words: a known name not visible yet, or a first name and a word around a one-word match the found
        person's name does not carry ("taylor swift" is not Nicole Taylor), resolves to nothing. When no run is
        either, the whole cleaned query resolved as one mention (fuzzy matching
        included) with no other words."""
        as_of = AsOf.of(as_of)
        tokens = clean(query).split()
        keys, _, prefixes = self._index()
        for start, end in spans(tokens):
            mention = " ".join(tokens[start:end])
            key = name_key(mention)
            if _ids_as_of(keys.get(key), as_of):  # a name, or an alias visible as of the day
                best, close = self.resolve(mention, as_of)
                if best is None and end - start > 1:
                    return mention, " ".join(tokens[:start] + tokens[end:]), (None, [])  # known only later
                name_words = partial(self._name_words, as_of)
                if best is not None and (full := _full_name_around(tokens, start, end, best, name_words)):
                    return (
                        " ".join(tokens[full[0] : full[1]]),
                        " ".join(tokens[: full[0]] + tokens[full[1] :]),
                        (None, []),
                    )
                if best is not None:
                    resolution = self._dominant_suffix(tokens[start:end], best, close, as_of)
                    return mention, " ".join(tokens[:start] + tokens[end:]), resolution
            if end - start >= MIN_PREFIX_WORDS and _ids_as_of(prefixes.get(key), as_of):
                best, close = self._resolve_leading_words(key, as_of)
                if best is not None:
                    return mention, " ".join(tokens[:start] + tokens[end:]), (best, close)
        mention = mention_of(query)
        return mention, "", self.resolve(mention, as_of)

    def _resolve_leading_words(self, key: str, as_of: AsOf) -> Resolution:
        """The entities of the day whose name or alias begins with the words of `key`, ranked like exact names."""
        cache_key = (as_of.day, as_of.knowledge, f"leading:{key}")
        resolution = self._resolved.get(cache_key)
        if resolution is None:
            ids = _ids_as_of(self._index()[2].get(key), as_of)
            resolution = self._rank([_choice(row, 100.0) for row in self._visible(ids, as_of)])
            self._resolved.put(cache_key, resolution)
        return resolution

    def _dominant_suffix(
        self, words: list[str], best: EntityChoice, close: list[EntityChoice], as_of: AsOf
    ) -> Resolution:
        """The entity named by the last word(s) of a multi-word name when it dominates as of the day: same type
        and at least SUFFIX_DOMINANCE times the found entity's chunks + facts ("Google Stadia", one chunk, yields
        to "Stadia", fifteen). The longest such suffix wins; the found entity stays as a close runner-up, so the
        answer reports the ambiguity. Suffixes shorter than MIN_FUZZY_CHARS are not names worth the switch."""
        keys = self._index()[0]
        for cut in range(1, len(words)):
            suffix = " ".join(words[cut:])
            if len(suffix) < MIN_FUZZY_CHARS or not _ids_as_of(keys.get(name_key(suffix)), as_of):
                continue
            other = self.resolve(suffix, as_of)[0]
            if other is not None and other.id != best.id and _dominates(other, best):
                return other, [best, *(c for c in close if c.id != other.id)]
        return best, close

    def _candidates(self, mention: str, key: str, as_of: AsOf) -> list[EntityChoice]:
        rows: list[EntityCounts] = self._visible(_ids_as_of(self._index()[0].get(key), as_of), as_of)
        if not rows:
            rows = list(self.store.find_entities(mention, limit=5, as_of=as_of))
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

    def a_known_name(self) -> str | None:
        """One entity name of the in-memory name index (the first in code-point order), None when the graph has none:
        what a warm-up asks about without reading the graph's names a second time."""
        names = self._index()[1]
        return min(names) if names else None

    def _name_words(self, as_of: AsOf) -> set[str]:
        """Every word of every known name and of every alias key visible as of the day (for _full_name_around),
        once per day and view until the index is refreshed: it walks every name key. Two first askers of a day
        may both walk them; neither waits for the other."""
        index = self._current()
        view = (as_of.day, as_of.knowledge)
        words = index.words.get(view)
        if words is None:
            words = {word for key, forms in index.keys.items() if _ids_as_of(forms, as_of) for word in key.split()}
            index.words[view] = words
        return words

    def _index(self) -> tuple[dict[str, Forms], dict[str, list[str]], dict[str, Forms]]:
        """(name key → forms, name → ids, leading words → forms), refreshed every `refresh_s`."""
        index = self._current()
        return index.keys, index.names, index.prefixes

    def _current(self) -> _NameIndex:
        """The name index, refreshed from the graph when older than `refresh_s`. Only the first load, which reads
        every entity name, makes a reader wait; after it the one reader that finds the index stale refreshes it
        with the entities whose names changed since (a few ms when none did) and the others answer from the old
        copy meanwhile. A whole rebuild at 94k entities held the GIL ~2 s every 30 s (issue 30)."""
        index = self._names_index
        if index is not None and time.monotonic() - index.loaded_at <= self.refresh_s:
            return index
        if index is not None and not self._refreshing.acquire(blocking=False):
            return index
        if index is None:
            self._refreshing.acquire()
        try:
            index = self._names_index
            if index is None or time.monotonic() - index.loaded_at > self.refresh_s:
                if index is not None and time.monotonic() - index.read_at <= NAMES_REREAD_S:
                    index = self._names_index = index.refreshed(self.store)
                else:
                    index = self._names_index = _NameIndex.read(self.store)
            return index
        finally:
            self._refreshing.release()

    def _visible(self, ids: list[str], as_of: AsOf) -> list[EntityCounts]:
        """Those of `ids` that exist as of the day, with their popularity then, most mentioned first (what
        GraphStore.entities_as_of returns), from their profiles: only ids without a fresh one are read."""
        profiles = {i: p for i in ids if (p := self._profiles.get(i)) is not None}
        missing = [i for i in dict.fromkeys(ids) if i not in profiles]
        for row in self.store.entity_profiles(missing):
            profiles[row.id] = profile = EntityProfile.of_row(row)
            self._profiles.put(profile.id, profile)
        rows = [row for p in profiles.values() if (row := p.as_of(as_of)) is not None]
        return sorted(rows, key=lambda r: (-r.mentions, -r.interactions, r.id))

    def _prior(self, choice: EntityChoice) -> float:
        return choice.score * (1 + math.log1p(choice.mentions) / 10)  # popular entities win near-ties

    def _fuzzy(self, mention: str, as_of: AsOf) -> list[EntityChoice]:
        """The FUZZY_LIMIT best-scoring entities of the day among all names that match: the hits are checked
        against the day best first, a batch at a time, until the limit is reached and no later hit could tie."""
        index = self._current()
        names = index.names
        hits = sorted(
            # a name no entity carries any more (renamed) stays in the fuzzy copy, and names nothing
            ((score, entity) for name, score in index.fuzzy.hits(mention).items() for entity in names.get(name, ())),
            key=lambda hit: (-hit[0], hit[1]),
        )
        choices: list[EntityChoice] = []
        for start in range(0, len(hits), FUZZY_BATCH):
            batch = hits[start : start + FUZZY_BATCH]
            if len(choices) >= FUZZY_LIMIT and batch[0][0] < choices[FUZZY_LIMIT - 1].score:
                break
            scores = {entity: score for score, entity in batch}
            choices += [_choice(r, scores[r.id]) for r in self._visible(list(scores), as_of)]
            choices.sort(key=lambda c: (-c.score, c.id))
        return choices[:FUZZY_LIMIT]


def _full_name_around(
    tokens: list[str], start: int, end: int, found: EntityChoice, name_words: Callable[[], set[str]]
) -> tuple[int, int] | None:
    """The span of a person's full name the query gives around one word that resolved to someone else ("taylor
    swift" around "taylor", a known Nicole Taylor's surname): a first name and the word after it, the found word
    one of the two, the other word a word of some known name (a surname, not "retirement" in "jordan
    retirement"), that the found person's name does not carry both of. None when there is no such name.
    `name_words` is asked only then: it walks every name key on a day's first ask (a few ms holding the GIL), which
    a query of a multi-word name, or one not naming a person, never needs."""
    if end - start != 1 or found.type != "PERSON":
        return None
    words = [t.casefold() for t in tokens]
    names = first_names()
    pairs: list[tuple[int, int]] = []
    if start > 0 and words[start - 1] in names and words[start - 1] not in CALENDAR_WORDS:
        pairs.append((start - 1, end))
    if end < len(words) and words[start] in names and words[end] in name_words():
        pairs.append((start, end + 1))
    carried = set(name_key(found.name).split())
    return next((pair for pair in pairs if not set(words[pair[0] : pair[1]]) <= carried), None)


class _FuzzyNames:
    """The names fuzzy matching weighs, with rapidfuzz's default processing done once (per name index copy) instead
    of twice per query.

    A name's _name_score is at least the cutoff only when token_sort_ratio is, or partial_ratio reaches cutoff /
    0.85: two passes of rapidfuzz's compiled scorers over every name find those names, with those two scores, and
    the Python score runs only where the passes do not settle it (_settled). A name similar to many others ("Entity
    123" among "Entity 1".."Entity 1999") had each of its ~1,600 hits scored in Python: ~10 ms holding the GIL on
    every question about an entity not known yet on its day, the slowest answers of the QA bench (issue 30)."""

    def __init__(self, names: list[str]):
        self.names = names
        self.processed = [utils.default_process(name) for name in names]
        self.lengths = np.array([len(name) for name in self.processed])

    def extended(self, names: list[str]) -> _FuzzyNames:
        """A copy that also weighs `names`: only theirs are processed (the lists are copied, not the strings)."""
        added = _FuzzyNames(names)
        added.names, added.processed = self.names + added.names, self.processed + added.processed
        added.lengths = np.concatenate((self.lengths, added.lengths))
        return added

    def hits(self, mention: str) -> dict[str, float]:
        query = utils.default_process(mention)
        by_sort = self._scores(query, fuzz.token_sort_ratio, FUZZY_CUTOFF)
        by_partial = self._scores(query, fuzz.partial_ratio, FUZZY_CUTOFF / PARTIAL_WEIGHT - 1e-6)
        settled = _settled(len(query), self.lengths, by_sort, by_partial)
        found = {
            self.names[i]: score for i, score in zip(np.flatnonzero(settled), by_sort[settled].tolist(), strict=True)
        }
        for i in np.flatnonzero(((by_sort > 0) | (by_partial > 0)) & ~settled):
            if (score := _name_score(query, self.processed[i])) >= FUZZY_CUTOFF:
                found[self.names[i]] = score
        return found

    def _scores(self, query: str, scorer: Any, cutoff: float) -> npt.NDArray[np.float64]:
        """Each name's score (0 below `cutoff`), by a compiled scorer on the processed strings."""
        scores = process.cdist([query], self.processed, scorer=scorer, score_cutoff=cutoff, dtype=np.float64)
        return scores[0]


def _settled(
    query_length: int,
    lengths: npt.NDArray[np.int_],
    by_sort: npt.NDArray[np.float64],
    by_partial: npt.NDArray[np.float64],
) -> npt.NDArray[np.bool_]:
    """The names whose _name_score is their token_sort_ratio, known from the passes (0: below a pass's cutoff). The
    score is max(token_sort_ratio, PARTIAL_WEIGHT × a partial score never above partial_ratio), so token_sort_ratio
    is all of it when it reaches the cutoff and PARTIAL_WEIGHT × partial_ratio does not exceed it (below its pass's
    cutoff, PARTIAL_WEIGHT × partial_ratio is below FUZZY_CUTOFF). Names or a query shorter than MIN_FUZZY_CHARS
    follow their own rule: never settled here."""
    long_enough = (lengths >= MIN_FUZZY_CHARS) & (query_length >= MIN_FUZZY_CHARS)
    return long_enough & (by_sort > 0) & (PARTIAL_WEIGHT * by_partial <= by_sort)


class _NameIndex:
    """One copy of the graph's name index (EntityResolver._current): built by one read, then only read, except the
    per-(day, view) name words it remembers. A refresh makes a new copy that shares every table it does not change
    and copies only the entries it does (_apply), so readers of the old copy never see a half-updated one."""

    def __init__(self, since_ms: int) -> None:
        self.records: dict[str, Record] = {}  # entity id → its name and aliases, as last read
        self.keys: dict[str, Forms] = {}  # name_key of every name and alias → entity ids, with alias times
        self.names: dict[str, list[str]] = {}  # entity name → entity ids (the fuzzy candidates)
        self.prefixes: dict[str, Forms] = {}  # the leading words of a longer name or alias → entity ids
        self.words: dict[tuple[int, str], set[str]] = {}  # EntityResolver._name_words per (day, view)
        self.fuzzy = _FuzzyNames([])  # the names, processed for fuzzy matching once (a refresh adds the new ones)
        self.since_ms = since_ms  # the next refresh reads the entities whose names were stamped from then on
        self.loaded_at = self.read_at = time.monotonic()  # read_at: of the whole read a refresh's copy started from

    @classmethod
    def read(cls, store: GraphStore) -> _NameIndex:
        """Every entity's names, from one read."""
        index = cls(store.graph_clock_ms() - NAMES_MARGIN_MS)  # the clock first: a later write is stamped after it
        index._apply({row.id: _record(row) for row in store.entity_names()})
        return index

    def refreshed(self, store: GraphStore) -> _NameIndex:
        """A copy with the entities whose names were stamped since the last read (writes.ENTITIES), read whole.
        Those of the margin read again (NAMES_MARGIN_MS) are dropped unless they changed; when none did, the copy
        shares everything, the name words of the days asked included. Entities are never deleted nor merged (only
        renamed), so one not read is unchanged."""
        since_ms = store.graph_clock_ms() - NAMES_MARGIN_MS
        rows = store.entity_names(self.since_ms)
        changed = {row.id: record for row in rows if self.records.get(row.id) != (record := _record(row))}
        index = copy.copy(self)
        index.since_ms, index.loaded_at = since_ms, time.monotonic()
        if changed:
            index._apply(changed)
        return index

    def _apply(self, changed: dict[str, Record]) -> None:
        """Put the changed entities' records in place of what this copy holds of them, on copies of its tables
        (shallow: the entries of other entities are shared) and of the entries they touch."""
        old = [(entity_id, record) for entity_id in changed if (record := self.records.get(entity_id))]
        new = list(changed.items())
        self.records = {**self.records, **changed}
        self.keys = _replaced(self.keys, _forms(old), _forms(new), changed)
        self.prefixes = _replaced(self.prefixes, _prefixes(old), _prefixes(new), changed)
        added = list(dict.fromkeys(name for _, (name, _) in new if name not in self.names))
        self.names = _renamed(self.names, old, new, set(changed))
        self.fuzzy = self.fuzzy.extended(added)
        self.words = {}


FormEntry = tuple[str, str, tuple[int, int] | None]  # (key, entity id, None for its name or an alias's times)


def _record(row: EntityName) -> Record:
    return row.name, tuple(sorted((name, day, ms) for name, day, ms in row.aliases or []))


def _forms(records: list[tuple[str, Record]]) -> list[FormEntry]:
    """The name key of each entity's name and of each of its aliases."""
    return [
        (name_key(form), entity_id, seen)
        for entity_id, (name, aliases) in records
        for form, seen in [(name, None), *((alias, (day, ms)) for alias, day, ms in aliases)]
    ]


def _prefixes(records: list[tuple[str, Record]]) -> list[FormEntry]:
    return [(prefix, entity_id, seen) for key, entity_id, seen in _forms(records) for prefix in leading_words(key)]


def _renamed(
    names: dict[str, list[str]], old: list[tuple[str, Record]], new: list[tuple[str, Record]], changed: set[str]
) -> dict[str, list[str]]:
    """A copy of `names` in which the changed entities carry their new names instead of their old: the id lists of
    the names either holds are copied, the others shared; a name no entity carries any more is dropped."""
    names = dict(names)
    for name in {name for _, (name, _) in old}:
        kept = [entity_id for entity_id in names[name] if entity_id not in changed]
        if kept:
            names[name] = kept
        else:
            del names[name]
    for entity_id, (name, _) in new:
        names[name] = [*names.get(name, ()), entity_id]
    return names


def _replaced(
    table: dict[str, Forms], old: list[FormEntry], new: list[FormEntry], changed: dict[str, Record]
) -> dict[str, Forms]:
    """A copy of `table` in which the changed entities' entries are `new` instead of `old`: the entries of each key
    either touches are copied, the others shared."""
    table = dict(table)
    for key in {key for key, _, _ in old} | {key for key, _, _ in new}:
        table[key] = {entity_id: seen for entity_id, seen in table.get(key, {}).items() if entity_id not in changed}
    for key, entity_id, seen in new:
        _add_form(table, key, entity_id, seen)
    for key in {key for key, _, _ in old}:
        if not table[key]:
            del table[key]
    return table


class _Recent:
    """A thread-safe map whose entries expire after `ttl_s` and whose least recently used go first past `size`."""

    def __init__(self, ttl_s: float, size: int):
        self.ttl_s, self.size = ttl_s, size
        self._items: OrderedDict[Hashable, tuple[float, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        with self._lock:
            item = self._items.get(key)
            if item is None or time.monotonic() - item[0] > self.ttl_s:
                return None
            self._items.move_to_end(key)
            return item[1]

    def put(self, key: Hashable, value: Any) -> None:
        with self._lock:
            self._items[key] = (time.monotonic(), value)
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)


def _presence(choice: EntityChoice) -> int:
    return choice.mentions + choice.interactions


def _dominates(other: EntityChoice, found: EntityChoice) -> bool:
    return other.type == found.type and _presence(other) >= SUFFIX_DOMINANCE * max(_presence(found), 1)


def _choice(row: EntityCounts, score: float) -> EntityChoice:
    return EntityChoice(row.id, row.name, row.type, score, row.interactions, row.mentions)


def _name_score(a: str, b: str, **_: object) -> float:
    """Whole-name agreement first ("john ford" → "John M. Ford" over "Ford"); a partial match ("doja" in
    "Doja Cat") counts at a discount, and only as far as the shorter side agrees with the whole words it falls in
    (_whole_word_partial): a letter or syllable inside a word is no match. Names or queries shorter than
    MIN_FUZZY_CHARS match only exactly."""
    if min(len(a), len(b)) < MIN_FUZZY_CHARS:
        return 100.0 if a == b else 0.0
    return max(fuzz.token_sort_ratio(a, b), PARTIAL_WEIGHT * _whole_word_partial(a, b))


def _whole_word_partial(a: str, b: str) -> float:
    """rapidfuzz's partial_ratio, capped by how well the shorter string agrees with the whole words of the longer
    that its best-aligned window touches: "doja" in "doja cat" stays 100, "taylr swift" in "taylor swift tour" ~91,
    but "e" aligned inside "universe" agrees with "universe" only 22. Never above partial_ratio, so partial_ratio's
    compiled pass still finds every name this can accept (_FuzzyNames)."""
    shorter, longer = (a, b) if len(a) <= len(b) else (b, a)
    aligned = fuzz.partial_ratio_alignment(shorter, longer)
    if aligned is None:  # only below a score_cutoff, which is not given: typed Optional for that case
        return 0.0
    start, end = aligned.dest_start, aligned.dest_end
    while start > 0 and not longer[start - 1].isspace():
        start -= 1
    while end < len(longer) and not longer[end].isspace():
        end += 1
    return min(aligned.score, fuzz.ratio(shorter, longer[start:end].strip()))


def parse_query(query: str, date: str, resolver: EntityResolver, knowledge: Knowledge = "ingested") -> ParsedQuery:
    """The query's day and entity as of that day, in the given view (the strict `ingested` one unless asked).
    A date written in the query (qa/dates.py) is the query day, but never one after `date`, the day it was
    asked: nothing the asker could not have known shows."""
    asked = day_key(date)
    stated = find_date(query, day_from_key(asked))
    day, words = asked, query
    if stated is not None:
        day, words = min(day_key(stated.day), asked), stated.rest
    mention, topic, (entity, alternatives) = resolver.find(words, AsOf(day, knowledge))
    return ParsedQuery(query, day, mention, entity, alternatives, topic, asked if day != asked else None)
