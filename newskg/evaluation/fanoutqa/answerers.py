"""Answering FanOutQA questions (issue 14): decompose, one as-of retrieval per sub-question, sub-answers read from
their own evidence, aggregated into a dict (or a list) — never one growing context — and that structure is the
final answer.

- graph: against our graph and its mirror as of the question's day (`qa/retrieve.Retriever`, the resolver of
  `qa/query`); the list step retrieves around the entity the list question names, its items are the other parties
  of the interactions found in the question's window; each attribute step retrieves around its item;
- evidence: the same, over a separate graph built from a folder of documents (evaluation/fanoutqa/docs.py);
- closed-book: the LLM alone, one call per question.

Sub-answers are read offline: a day for "when / what day / what date" attributes (the event day of the item's
interaction with the list's entity, inside the window), otherwise the text of the evidence that shares the most
words with the sub-question."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from newskg.core.llm.client import LLMClient
from newskg.core.timeaxes import day_iso, day_key
from newskg.evaluation.fanoutqa.decompose import Decomposer, Decomposition
from newskg.evaluation.fanoutqa.prompts import closed_book
from newskg.evaluation.fanoutqa.records import AnswerTrace, AnswerType, Primitive, SubAnswer, SystemAnswer
from newskg.graph.mirror.qdrant import VectorMirror
from newskg.graph.store.asof import AsOf
from newskg.graph.store.store import GraphStore
from newskg.qa.evidence import Evidence
from newskg.qa.query import EntityResolver
from newskg.qa.retrieve import Retriever, Strategy

DEV_AS_OF = "2023-11-20"  # FanOutQA's Wikipedia snapshot: the dev questions are asked as of that day
ANSWERERS = ("graph", "closed-book", "evidence")
NAME = re.compile(r"\b[A-Z][\w’'&.-]*(?:\s+(?:of\s+|in\s+|the\s+)?[A-Z0-9][\w’'&.-]*)*")
LEADING = re.compile(r"^(What|How|When|Who|Which|Where|Why|The|For|Name|On|Is|Are|Did|Do)\b\s*")
ISO_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
DAY_QUESTION = re.compile(r"\b(what day|which day|what date|when)\b", re.I)
WORD = re.compile(r"[a-z0-9]+")
MIN_NAME_SCORE = 85.0
EVIDENCE_CHARS = 300


class Answerer(Protocol):
    name: str

    def answer(self, question_id: str, question: str, as_of: AsOf) -> AnswerTrace: ...


@dataclass(frozen=True)
class Window:
    first: int | None = None
    last: int | None = None

    @classmethod
    def of(cls, question: str) -> Window:
        days = sorted(day_key(d) for d in ISO_DAY.findall(question))
        return cls(days[0], days[-1]) if len(days) >= 2 else cls()

    def holds(self, day: int) -> bool:
        return (self.first is None or day >= self.first) and (self.last is None or day <= self.last)


def aggregate(
    items: Sequence[str], sub_answers: Sequence[AnswerType | None] | None
) -> dict[str, Primitive] | list[Primitive]:
    """The structured answer: the items when only they were asked for, else {item: sub-answer} for every item a
    sub-answer was found for (a dict or list sub-answer is flattened to text: the reference's answers are flat)."""
    if sub_answers is None:
        return list(dict.fromkeys(items))
    out: dict[str, Primitive] = {}
    for item, sub in zip(items, sub_answers, strict=True):
        if sub is None or item in out:
            continue
        out[item] = sub if isinstance(sub, (str, int, float, bool)) else _flat(sub)
    return out


def _flat(value: AnswerType) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k}: {v}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def overlap(question: str, text: str) -> int:
    return len(set(WORD.findall(question.lower())) & set(WORD.findall(text.lower())))


def rerank(question: str, found: list[Evidence], k: int) -> list[Evidence]:
    """The k pieces sharing the most words with the sub-question (retrieval order breaks ties): an attribute
    step's retrieval around its item takes a pool of k × `pool` and keeps these k, so the item's interaction with
    the list's entity is not cut by busier days nearer the as-of day."""
    ranked = sorted(enumerate(found), key=lambda pair: (-overlap(question, pair[1].text), pair[0]))
    return [e for _, e in ranked[:k]]


def evidence_rows(found: list[Evidence]) -> list[dict[str, object]]:
    return [
        {
            "id": e.id,
            "kind": e.kind,
            "event_day": e.event_day,
            "score": e.score,
            "sources": e.sources,
            "text": e.text[:EVIDENCE_CHARS],
        }
        for e in found
    ]


@dataclass(frozen=True)
class FanoutSearch:
    """How the graph answerer searches: the retrieval strategy, `k` evidence per answer, `k * fanout` for the list
    question, `k * pool` reranked to `k` per item, and the retrieval's backoff window in days."""

    strategy: Strategy = "temporal"
    k: int = 5
    fanout: int = 20
    window_days: int = 400
    pool: int = 4


class GraphFanoutAnswerer:
    name = "graph"

    def __init__(
        self,
        store: GraphStore,
        mirror: VectorMirror | None,
        decomposer: Decomposer | None = None,
        search: FanoutSearch = FanoutSearch(),
        name: str = "graph",  # "evidence" when the store is a --docs folder's graph
    ):
        self.name = name
        self.store = store
        # An item's partners and days are the facts that name it: the wider scope QA uses (facts stated by any chunk
        # that mentions the entity) would bring other entities' parties into the list and crowd each item's pool.
        self.retriever = Retriever(store, mirror, backoff_days=search.window_days, facts_via_chunks=False)
        self.resolver = EntityResolver(store)
        self.decomposer = decomposer or Decomposer()
        self.strategy: Strategy = search.strategy
        self.k, self.fanout, self.pool = search.k, search.fanout, search.pool

    def answer(self, question_id: str, question: str, as_of: AsOf) -> AnswerTrace:
        started = time.perf_counter()
        plan = self.decomposer(question)
        window = Window.of(question)
        if not plan.fans_out:
            steps = [self._whole(question_id, question, as_of)]
            final = steps[0].answer
        else:
            steps, final = self._fan_out(question_id, plan, window, as_of)
        return AnswerTrace(
            question_id=question_id,
            answerer=self.name,
            decomposed_by=plan.by,
            as_of=as_of.iso,
            steps=steps,
            answer=final or None,
            seconds=round(time.perf_counter() - started, 4),
        )

    def _fan_out(
        self, question_id: str, plan: Decomposition, window: Window, as_of: AsOf
    ) -> tuple[list[SubAnswer], AnswerType | None]:
        anchors = self.entities_in(plan.list_question, as_of)
        anchor = anchors[0] if anchors else None
        found = self.retrieve(anchor, plan.list_question, as_of, self.k * self.fanout)
        items = self.parties(found, set(anchors), window)
        steps = [
            SubAnswer(
                id=f"{question_id}-list",
                kind="list",
                question=plan.list_question,
                entity_id=anchor,
                evidence=evidence_rows(found),
                answer=[name for _, name in items],
            )
        ]
        if not plan.attribute_template:
            return steps, aggregate([name for _, name in items], None)
        for n, (item_id, name) in enumerate(items, 1):
            sub_question = plan.attribute(name)
            evidence = rerank(sub_question, self.retrieve(item_id, sub_question, as_of, self.k * self.pool), self.k)
            steps.append(
                SubAnswer(
                    id=f"{question_id}-{n}",
                    kind="attribute",
                    question=sub_question,
                    item=name,
                    entity_id=item_id,
                    evidence=evidence_rows(evidence),
                    answer=self.read(sub_question, evidence, set(anchors), window),
                )
            )
        return steps, aggregate([s.item or "" for s in steps[1:]], [s.answer for s in steps[1:]])

    def _whole(self, question_id: str, question: str, as_of: AsOf) -> SubAnswer:
        named = self.entities_in(question, as_of)
        entity = named[0] if named else None
        found = self.retrieve(entity, question, as_of, self.k)
        return SubAnswer(
            id=f"{question_id}-whole",
            kind="whole",
            question=question,
            entity_id=entity,
            evidence=evidence_rows(found),
            answer=self.read(question, found, set(named), Window()),
        )

    def retrieve(self, entity_id: str | None, text: str, as_of: AsOf, k: int) -> list[Evidence]:
        """One as-of retrieval: around the entity when one was resolved, else over the mirror by meaning."""
        if entity_id is None:
            return self.retriever.retrieve("generic", None, text, as_of, k)
        return self.retriever.retrieve(self.strategy, entity_id, text, as_of, k)

    def entities_in(self, text: str, as_of: AsOf) -> list[str]:
        """The entities a sub-question names, among those the graph knew as of the day."""
        found: list[str] = []
        for mention in NAME.findall(text):
            mention = LEADING.sub("", mention).strip()
            if len(mention) < 2:
                continue
            best, _ = self.resolver.resolve(mention, as_of)
            if best and best.score >= MIN_NAME_SCORE and best.id not in found:
                found.append(best.id)
        return found

    def parties(self, found: list[Evidence], anchors: set[str], window: Window) -> list[tuple[str, str]]:
        """The list step's items: the other parties of the interactions found, inside the window, first seen first."""
        if not found:
            return []
        kept = {e.id for e in found if e.kind == "interaction" and window.holds(e.event_day)}
        items: dict[str, str] = {}
        for x in sorted(self.store.interactions(list(kept)), key=lambda x: (x.event_day, x.id)):
            for party, name in ((x.subject_id, x.subject_name), (x.object_id, x.object_name)):
                if party and name and party not in anchors:
                    items.setdefault(party, name)
        return sorted(items.items(), key=lambda kv: (kv[1].lower(), kv[0]))

    def read(self, question: str, found: list[Evidence], anchors: set[str], window: Window) -> Primitive | None:
        """A sub-answer from its own evidence only."""
        if not found:
            return None
        if DAY_QUESTION.search(question):
            return self._day(found, anchors, window)
        best = max(found, key=lambda e: (overlap(question, e.text), e.score))
        return best.text

    def _day(self, found: list[Evidence], anchors: set[str], window: Window) -> str | None:
        in_window = [e for e in found if window.holds(e.event_day)]
        if anchors:
            ids = [e.id for e in in_window if e.kind == "interaction"]
            linked = {x.id for x in self.store.interactions(ids) if {x.subject_id, x.object_id} & anchors}
            in_window = [e for e in in_window if e.id in linked]
        return day_iso(min(e.event_day for e in in_window)) if in_window else None


class ClosedBookAnswerer:
    name = "closed-book"

    def __init__(self, client: LLMClient):
        self.client = client

    def answer(self, question_id: str, question: str, as_of: AsOf) -> AnswerTrace:
        started = time.perf_counter()
        reply = self.client.complete(closed_book.build(question, as_of.iso or "today"))
        answer = None if reply is None else reply.answer
        if reply is None:
            self.client.count(closed_book.NAME, "unparsed")
        step = SubAnswer(id=f"{question_id}-whole", kind="whole", question=question, answer=answer)
        return AnswerTrace(
            question_id=question_id,
            answerer=self.name,
            decomposed_by="none",
            as_of=as_of.iso,
            steps=[step],
            answer=answer,
            seconds=round(time.perf_counter() - started, 4),
        )


def answer_all(
    answerer: Answerer, questions: Sequence[tuple[str, str, AsOf]], on_done: Callable[[], None] | None = None
) -> tuple[list[SystemAnswer], list[AnswerTrace]]:
    """Every (id, question, as-of) in order: the leaderboard's answers (a question without one is left out and
    scores 0) and every trace."""
    answers: list[SystemAnswer] = []
    traces: list[AnswerTrace] = []
    for question_id, question, as_of in questions:
        trace = answerer.answer(question_id, question, as_of)
        traces.append(trace)
        if trace.answer is not None:
            answers.append(SystemAnswer(id=question_id, answer=trace.answer))
        if on_done:
            on_done()
    return answers, traces
