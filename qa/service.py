"""The QA pipeline behind `newskg ask` and the HTTP API: parse → resolve the entity → retrieve as of the date →
answer, with timings."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from extract.llm.client import LLMClient
from graph.mirror.qdrant import VectorMirror
from graph.store.store import GraphStore
from qa.answer import generate
from qa.evidence import Evidence
from qa.query import EntityResolver, parse_query
from qa.retrieve import Retriever


@dataclass
class AskResult:
    query: str
    reformulated: str
    entity: dict | None
    alternatives: list[dict]
    as_of: str
    strategy: str
    answer: str
    answer_mode: str
    evidence: list[Evidence] = field(default_factory=list)
    latency_ms: float = 0.0

    def as_dict(self) -> dict:
        return {"query": self.query, "reformulated": self.reformulated, "entity": self.entity,
                "ambiguous": bool(self.alternatives), "alternatives": self.alternatives, "as_of": self.as_of,
                "strategy": self.strategy, "answer": self.answer, "answer_mode": self.answer_mode,
                "evidence": [e.as_dict() for e in self.evidence], "latency_ms": round(self.latency_ms, 1)}


class QAService:
    def __init__(self, store: GraphStore, mirror: VectorMirror | None, llm: LLMClient | None = None,
                 backoff_days: int = 7):
        self.store = store
        self.mirror = mirror
        self.llm = llm
        self.resolver = EntityResolver(store)
        self.retriever = Retriever(store, mirror, backoff_days)

    def ask(self, query: str, date: str, k: int = 10, strategy: str = "hybrid") -> AskResult:
        start = time.perf_counter()
        parsed = parse_query(query, date, self.resolver)
        entity_id = parsed.entity.id if parsed.entity else None
        evidence = self.retriever.retrieve(strategy, entity_id, parsed.reformulated, parsed.day, k)
        answer, mode = generate(self.llm, parsed.reformulated, evidence)
        return AskResult(query=query, reformulated=parsed.reformulated,
                         entity=parsed.entity.__dict__ if parsed.entity else None,
                         alternatives=[a.__dict__ for a in parsed.alternatives], as_of=parsed.date_words,
                         strategy=strategy, answer=answer, answer_mode=mode, evidence=evidence,
                         latency_ms=(time.perf_counter() - start) * 1000)
