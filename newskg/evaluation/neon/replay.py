"""The replay (NEON §3–4): every query of every spike day is answered as of that day — the graph as it stood at
the end of it (published and ingested by then) — by every method × strategy × k, and every answer is scored.

Retrieval runs once per (query, method, strategy) at the largest k; the answer for a smaller k is built from the
first k items of that ranking (each strategy's top-k is a prefix of its top-K: both rank and cut, see
qa/retrieve.py), so a k sweep costs one retrieval, not one per k. Resolution, retrieval and answering are the QA
layer's own (qa/query.py, qa/retrieve.py, qa/answer.py)."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, TypedDict

from newskg.core.llm.client import LLMClient
from newskg.core.timeaxes import day_iso
from newskg.evaluation.neon.linking import LinkedLog
from newskg.evaluation.neon.methods import MethodSpec, retrieve
from newskg.evaluation.neon.scoring import JudgementRecord, Scorer
from newskg.evaluation.neon.spikes import SpikeSeries
from newskg.graph.store.asof import AsOf
from newskg.qa.answer import AnswerMode, generate
from newskg.qa.query import EntityResolver, parse_query
from newskg.qa.retrieve import Retriever


@dataclass(frozen=True)
class ReplayQuery:
    query: str
    day: int
    entity_id: str
    entity_name: str
    issues: int  # how often it was asked that day (log), or the day's mention count (graph)
    origin: str  # log | graph


class SpikeEntity(TypedDict):
    id: str
    name: str


class QueryRecord(TypedDict):
    """What every run of one query shares (the first keys of its records)."""

    query: str
    day: str  # ISO date
    day_key: int  # yyyymmdd
    origin: str
    issues: int
    spike_entity: SpikeEntity
    entity: dict[str, Any] | None  # the resolved entity (qa's EntityChoice) as a JSON object
    reformulated: str


class ReplayRecord(QueryRecord):
    """One run (query × method × strategy × k) as report.json's "runs" holds it."""

    method: str
    method_label: str
    strategy: str
    k: int
    evidence: list[dict[str, Any]]  # each item's JSON form (qa's Evidence.as_dict)
    answer: str
    answer_mode: AnswerMode
    fallback_reason: str | None
    response_chars: int
    judgements: dict[str, JudgementRecord]  # scorer name → its judgement


@dataclass(frozen=True)
class ReplayPlan:
    methods: Sequence[MethodSpec]
    strategies: Sequence[str]
    ks: Sequence[int]

    @property
    def runs_per_query(self) -> int:
        return len(self.methods) * len(self.strategies) * len(self.ks)


def log_queries(spikes: Sequence[SpikeSeries], linked: LinkedLog) -> list[ReplayQuery]:
    """The log's own queries of each entity's spike days."""
    return [
        ReplayQuery(q.query, day, s.entity_id, s.name, q.count, "log")
        for s in spikes
        for day in s.spikes
        for q in linked.queries.get((s.entity_id, day), [])
    ]


def graph_queries(spikes: Sequence[SpikeSeries]) -> list[ReplayQuery]:
    """Without a log: the entity's name, asked on each of its news-side spike days."""
    counts = {s.entity_id: dict(zip(s.days, s.counts, strict=True)) for s in spikes}
    return [
        ReplayQuery(s.name, day, s.entity_id, s.name, counts[s.entity_id][day], "graph")
        for s in spikes
        for day in s.spikes
    ]


def choose(queries: list[ReplayQuery], limit: int | None, seed: int = 0) -> list[ReplayQuery]:
    """A seeded sample of `limit` queries (all without a limit), in replay order: by day, entity, most asked."""
    chosen = random.Random(seed).sample(queries, limit) if limit and len(queries) > limit else list(queries)
    return sorted(chosen, key=lambda q: (q.day, q.entity_name, -q.issues, q.query))


class Replayer:
    def __init__(
        self,
        resolver: EntityResolver,
        retriever: Retriever,
        answer_llm: LLMClient | None,
        scorers: Sequence[Scorer],
    ):
        self.resolver = resolver
        self.retriever = retriever
        self.answer_llm = answer_llm
        self.scorers = scorers

    def replay(
        self, queries: Sequence[ReplayQuery], plan: ReplayPlan, on_run: Callable[[], None] | None = None
    ) -> list[ReplayRecord]:
        records: list[ReplayRecord] = []
        for query in queries:
            records += self.replay_one(query, plan, on_run)
        return records

    def replay_one(
        self, query: ReplayQuery, plan: ReplayPlan, on_run: Callable[[], None] | None = None
    ) -> list[ReplayRecord]:
        parsed = parse_query(query.query, day_iso(query.day), self.resolver, "ingested")
        as_of = AsOf(query.day, "ingested")
        entity_id = parsed.entity.id if parsed.entity else None
        subject = parsed.entity.name if parsed.entity else query.entity_name
        base: QueryRecord = {
            "query": query.query,
            "day": day_iso(query.day),
            "day_key": query.day,
            "origin": query.origin,
            "issues": query.issues,
            "spike_entity": {"id": query.entity_id, "name": query.entity_name},
            "entity": asdict(parsed.entity) if parsed.entity else None,
            "reformulated": parsed.reformulated,
        }
        records: list[ReplayRecord] = []
        deepest = max(plan.ks)
        embedder = self.retriever.mirror.embedder if self.retriever.mirror else None  # the offline answer's ranking
        for method in plan.methods:
            for strategy in plan.strategies:
                ranked = retrieve(self.retriever, method, strategy, entity_id, parsed.texts, as_of, deepest)
                for k in plan.ks:
                    evidence = ranked[:k]
                    answer = generate(self.answer_llm, parsed.texts, evidence, embedder)
                    scores = {
                        s.name: s.score(query.query, query.day, answer.text, evidence, subject) for s in self.scorers
                    }
                    records.append(
                        {
                            **base,
                            "method": method.name,
                            "method_label": method.label,
                            "strategy": strategy,
                            "k": k,
                            "evidence": [e.as_dict() for e in evidence],
                            "answer": answer.text,
                            "answer_mode": answer.mode,
                            "fallback_reason": answer.fallback_reason,
                            "response_chars": len(answer.text),
                            "judgements": {
                                name: {"attributes": s.attributes, "raw": s.raw} for name, s in scores.items()
                            },
                        }
                    )
                    if on_run:
                        on_run()
        return records
