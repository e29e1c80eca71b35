"""Queries → entities → spike days. A query is linked with the QA layer's resolver as of the query's own day
(qa/query.py: only entities the graph knew that day are candidates), so a log can never be linked to an entity
first seen after the day it was typed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

from evaluation.neon.logs import QueryLog, normalise
from evaluation.neon.spikes import SpikeRule, SpikeSeries, detect
from graph.store.asof import AsOf
from qa.query import EntityResolver, mention_of

LINK_CACHE = 200_000  # (day, mention) pairs remembered: a busy log asks the same thing all day


@dataclass(frozen=True)
class LinkedEntity:
    id: str
    name: str


class Linker(Protocol):
    def link(self, query: str, day: int) -> LinkedEntity | None: ...


class ResolverLinker:
    """The QA resolver in the strict view (published and ingested by the end of the day)."""

    def __init__(self, resolver: EntityResolver):
        self.resolver = resolver
        self._cached = lru_cache(maxsize=LINK_CACHE)(self._resolve)

    def link(self, query: str, day: int) -> LinkedEntity | None:
        return self._cached(normalise(mention_of(query)), day)

    def _resolve(self, mention: str, day: int) -> LinkedEntity | None:
        best, _ = self.resolver.resolve(mention, AsOf(day, "ingested"))
        return LinkedEntity(best.id, best.name) if best else None


@dataclass(frozen=True)
class DayQuery:
    """One distinct query of one day, with how often it was issued."""

    query: str
    day: int
    count: int


@dataclass
class LinkedLog:
    entities: dict[str, LinkedEntity] = field(default_factory=dict)
    daily: dict[str, dict[int, int]] = field(default_factory=dict)  # entity id → day → issues
    queries: dict[tuple[str, int], list[DayQuery]] = field(default_factory=dict)  # (entity id, day) → queries
    unlinked_queries: int = 0  # distinct (query, day) pairs no entity of that day matched
    unlinked_issues: int = 0
    first_day: int = 0
    last_day: int = 0


def link_log(log: QueryLog, linker: Linker, on_item=None) -> LinkedLog:
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
