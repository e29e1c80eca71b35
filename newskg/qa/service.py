"""The QA pipeline behind `newskg ask` and the HTTP API: parse → resolve the entity → retrieve as of the date →
answer, with timings. An empty answer in the strict view says why when it can: facts published by the day that
were ingested after it (a historical corpus ingested without `--backfill`)."""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from newskg.core.timeaxes import day_iso, day_words, iso
from newskg.graph.mirror.base import VectorMirror
from newskg.graph.store.asof import AsOf, Knowledge
from newskg.graph.store.store import GraphStore
from newskg.qa.answer import AnswerMode, generate
from newskg.qa.evidence import Evidence
from newskg.qa.query import EntityChoice, EntityResolver, ParsedQuery, parse_query
from newskg.qa.retrieve import Retriever, Strategy

if TYPE_CHECKING:  # the openai SDK behind it is imported only where an LLM client is made (qa/answer.llm_failures)
    from newskg.core.llm.client import LLMClient

KNOWLEDGE_LABELS = {
    "ingested": "what the system knew at the end of the day: published on or before it and ingested by its end",
    "published": "publication view: everything published on or before the day, including facts ingested after "
    "it, so more than the system knew on that day",
}


@dataclass
class NotYetIngested:
    """Facts and chunks published by the day but ingested after it: why a strict answer can be empty."""

    facts: int
    chunks: int
    scope: str
    first_ingested: str | None


@dataclass
class AskResult:
    query: str
    reformulated: str
    entity: EntityChoice | None
    alternatives: list[EntityChoice]
    as_of: str
    strategy: str
    answer: str
    answer_mode: AnswerMode
    evidence: list[Evidence] = field(default_factory=list[Evidence])
    latency_ms: float = 0.0
    knowledge: Knowledge = "ingested"
    fallback_reason: str | None = None
    not_yet_ingested: NotYetIngested | None = None
    note: str | None = None
    asked: str | None = None  # the day the query was asked, when a date written in it set an earlier query day

    def as_dict(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "reformulated": self.reformulated,
            "entity": asdict(self.entity) if self.entity else None,
            "ambiguous": bool(self.alternatives),
            "alternatives": [asdict(a) for a in self.alternatives],
            "as_of": self.as_of,
            "asked": self.asked,
            "knowledge": self.knowledge,
            "knowledge_label": KNOWLEDGE_LABELS[self.knowledge],
            "strategy": self.strategy,
            "answer": self.answer,
            "answer_mode": self.answer_mode,
            "fallback_reason": self.fallback_reason,
            "note": self.note,
            "not_yet_ingested": asdict(self.not_yet_ingested) if self.not_yet_ingested else None,
            "evidence": [e.as_dict() for e in self.evidence],
            "latency_ms": round(self.latency_ms, 1),
        }


class QAService:
    def __init__(
        self, store: GraphStore, mirror: VectorMirror | None, llm: LLMClient | None = None, backoff_days: int = 7
    ):
        self.store = store
        self.mirror = mirror
        self.llm = llm
        self.resolver = EntityResolver(store)
        self.retriever = Retriever(store, mirror, backoff_days)

    def ask(
        self, query: str, date: str, k: int = 10, strategy: Strategy = "hybrid", knowledge: Knowledge = "ingested"
    ) -> AskResult:
        """Parse (a date in the query is its day), resolve as of the day, retrieve with both forms of the query,
        answer with both."""
        start = time.perf_counter()
        parsed = parse_query(query, date, self.resolver, knowledge)
        entity_id = parsed.entity.id if parsed.entity else None
        if parsed.entity:  # how busy the entity is: the graph reads a busy one's day by bounds (reader.note_facts)
            self.store.note_facts(parsed.entity.id, parsed.entity.interactions)
        evidence = self.retriever.retrieve(strategy, entity_id, parsed.texts, AsOf(parsed.day, knowledge), k)
        answer = generate(self.llm, parsed.texts, evidence, self.mirror.embedder if self.mirror else None)
        late = self._not_yet_ingested(parsed) if not evidence and knowledge == "ingested" else None
        return AskResult(
            query=query,
            reformulated=parsed.reformulated,
            entity=replace(parsed.entity) if parsed.entity else None,  # copies: choices are cached
            alternatives=[replace(a) for a in parsed.alternatives],
            as_of=parsed.date_words,
            strategy=strategy,
            answer=answer.text,
            answer_mode=answer.mode,
            evidence=evidence,
            latency_ms=(time.perf_counter() - start) * 1000,
            knowledge=knowledge,
            fallback_reason=answer.fallback_reason,
            not_yet_ingested=late,
            note=_late_note(parsed, late) if late else None,
            asked=day_words(parsed.asked_day) if parsed.asked_day else None,
        )

    def _not_yet_ingested(self, parsed: ParsedQuery) -> NotYetIngested | None:
        """What the publication view would add: for the query's entity, else for the whole graph. None when nothing
        is hidden. When the strict view knows no entity, the one the publication view resolves is counted but never
        named (issue #29): its name, or the alias that found it, may be known only after the day; asking with
        knowledge=published names it."""
        entity = parsed.entity
        hidden = None if entity else self.resolver.find(parsed.mention, AsOf(parsed.day, "published"))[2][0]
        counted = entity or hidden
        counts = self.store.ingested_late(parsed.day, counted.id if counted else None)
        if not counts.facts and not counts.chunks:
            return None
        first = counts.first_ingested_ms
        scope = f"entity {entity.name} ({entity.id})" if entity else HIDDEN_ENTITY if hidden else "whole graph"
        return NotYetIngested(
            facts=counts.facts,
            chunks=counts.chunks,
            scope=scope,
            first_ingested=iso(dt.datetime.fromtimestamp(first / 1000, dt.UTC)) if first is not None else None,
        )


# The scope of a late count for an entity only the publication view knows: counted, not named.
HIDDEN_ENTITY = "the entity the query names in the publication view (not named in this view)"


def _late_note(parsed: ParsedQuery, late: NotYetIngested) -> str:
    if late.scope == HIDDEN_ENTITY:
        about = "the entity the query names in the publication view"
    else:
        about = late.scope.removeprefix("entity ") if late.scope != "whole graph" else "the graph"
    return (
        f"No evidence as of {day_iso(parsed.day)}; {late.facts} facts ({late.chunks} chunks) "
        f"about {about} published on or before that day were ingested after it (first on "
        f"{late.first_ingested}). To see them: ingest historical corpora with `--backfill` (dated as known "
        "when published), or ask with knowledge=published (`newskg ask --knowledge published`), a view by "
        "publication day only."
    )
