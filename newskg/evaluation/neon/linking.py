"""Queries → entities → spike days. A query is linked with the QA layer's resolver as of the query's own day
(qa/query.py: only entities the graph knew that day are candidates), so a log can never be linked to an entity
first seen after the day it was typed."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from newskg.evaluation.neon.logs import QueryLog, normalise
from newskg.evaluation.neon.spikes import SpikeRule, SpikeSeries, detect
from newskg.graph.store.asof import AsOf
from newskg.qa.query import Resolution, mention_of

LINK_CACHE = 200_000  # (day, mention) pairs remembered: a busy log asks the same thing all day
# A log query is counted, not answered: a wrong link invents a spike, a missing one only drops a query. So a log
# query links only to a name that agrees at least this much (qa/query._name_score, 0-100): an exact name or alias
# (100), a whole-name typo ("taylor swfit" 92), a name's full part ("doja" in "Doja Cat" 85) — not a merely
# similar name ("ormian holdings" → "Varnaan Holdings" 77, which the answering resolver accepts from 75). A partial
# match scores 85 at most, and only for whole words: a one- or two-letter name ("E", found inside "universe") or a
# word's fragment never reaches it (qa/query._name_score; tests/unit/test_entity_resolver.py).
LOG_MIN_SCORE = 85.0


@dataclass(frozen=True)
class LinkedEntity:
    id: str
    name: str


class Linker(Protocol):
    def link(self, query: str, day: int) -> LinkedEntity | None: ...


class Resolves(Protocol):
    """What linking needs of the QA resolver (qa/query.EntityResolver)."""

    def resolve(self, mention: str, as_of: AsOf | int | str | None = None) -> Resolution: ...


class ResolverLinker:
    """The QA resolver in the strict view (published and ingested by the end of the day), keeping only candidates
    whose name agrees at least `min_score` (LOG_MIN_SCORE): the resolver's best, else the first close runner-up
    that does."""

    def __init__(self, resolver: Resolves, min_score: float = LOG_MIN_SCORE):
        self.resolver = resolver
        self.min_score = min_score
        self._cached = lru_cache(maxsize=LINK_CACHE)(self._resolve)

    def link(self, query: str, day: int) -> LinkedEntity | None:
        return self._cached(normalise(mention_of(query)), day)

    def _resolve(self, mention: str, day: int) -> LinkedEntity | None:
        best, close = self.resolver.resolve(mention, AsOf(day, "ingested"))
        strict = [c for c in ([best] if best else []) + close if c.score >= self.min_score]
        return LinkedEntity(strict[0].id, strict[0].name) if strict else None


@dataclass(frozen=True)
class DayQuery:
    """One distinct query of one day, with how often it was issued."""

    query: str
    day: int
    count: int


@dataclass
class LinkedLog:
    entities: dict[str, LinkedEntity] = field(default_factory=dict[str, LinkedEntity])
    daily: dict[str, dict[int, int]] = field(default_factory=dict[str, dict[int, int]])  # entity id → day → issues
    queries: dict[tuple[str, int], list[DayQuery]] = field(  # (entity id, day) → queries
        default_factory=dict[tuple[str, int], list[DayQuery]]
    )
    unlinked_queries: int = 0  # distinct (query, day) pairs no entity of that day matched
    unlinked_issues: int = 0
    first_day: int = 0
    last_day: int = 0


def link_log(log: QueryLog, linker: Linker, on_item: Callable[[], None] | None = None) -> LinkedLog:
    linked = LinkedLog()
    days = [day for _, day in log.daily]
    linked.first_day, linked.last_day = (min(days), max(days)) if days else (0, 0)
    for (key, day), count in sorted(log.daily.items(), key=lambda item: (item[0][1], item[0][0])):
        text = log.text[key]
        entity = linker.link(text, day)
        if on_item:
            on_item()
        if entity is None:
            linked.unlinked_queries += 1
            linked.unlinked_issues += count
            continue
        linked.entities.setdefault(entity.id, entity)
        per_day = linked.daily.setdefault(entity.id, {})
        per_day[day] = per_day.get(day, 0) + count
        linked.queries.setdefault((entity.id, day), []).append(DayQuery(text, day, count))
    return linked


def log_spikes(linked: LinkedLog, rule: SpikeRule) -> list[SpikeSeries]:
    """Every linked entity's series over the log's whole period (one period for all, so days line up)."""
    return [
        detect(counts, linked.first_day, linked.last_day, rule, entity_id, linked.entities[entity_id].name)
        for entity_id, counts in sorted(linked.daily.items(), key=lambda item: linked.entities[item[0]].name)
    ]


def graph_spikes(
    counts_by_entity: Mapping[str, tuple[str, Mapping[int, int]]], first: int, last: int, rule: SpikeRule
) -> list[SpikeSeries]:
    """News-side spikes: entity id → (name, day → chunks mentioning it), one period for all."""
    return [
        detect(counts, first, last, rule, entity_id, name)
        for entity_id, (name, counts) in sorted(counts_by_entity.items(), key=lambda item: item[1][0])
    ]
