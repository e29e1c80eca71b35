"""The three ways `newskg eval neoqa` answers an instance:

- evidence: the offline reader over the instance's own articles (the paper's setting, no LLM);
- graph: ignores the given articles and retrieves from our graph as it stood on the question date: the entities
  the question names, their neighbours through interactions, and the chunks that mention them, plus the chunks
  nearest the question in the graph's Qdrant mirror (for names our NER split or missed); then the same reader.
  The benchmark run "off the same graph" the pipeline built from the stream;
- llm: the instance's articles (the most relevant first, cut to the model's context) and our MCQ prompt through
  the project's LLM client, parsed per appendix F.7.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from newskg.core.llm.client import LLMClient
from newskg.core.timeaxes import day_key, shift_day
from newskg.evaluation.neoqa import reader
from newskg.evaluation.neoqa.prompts import mcq_answer
from newskg.evaluation.neoqa.records import UNANSWERABLE, Instance, NewsArticle
from newskg.graph.mirror.qdrant import CHUNKS, VectorMirror
from newskg.graph.store.store import GraphStore
from newskg.qa.query import EntityResolver
from newskg.qa.retrieve import Retriever

QUESTION_WORDS = re.compile(r"^(What|How|According|When|Who|Which|Where|Why|The)\s+")
MIN_NAME_SCORE = 85.0


@dataclass
class Answer:
    index: int  # −1: no parseable choice
    rationale: str


class Answerer(Protocol):
    name: str

    def answer(self, instance: Instance, articles: list[NewsArticle]) -> Answer: ...


class EvidenceAnswerer:
    name = "evidence"

    def answer(self, instance: Instance, articles: list[NewsArticle]) -> Answer:
        choice = reader.choose(instance.question, instance.answer_options, [a.text() for a in articles])
        return Answer(choice.index, choice.rationale)


class GraphAnswerer:
    name = "graph"

    def __init__(
        self,
        store: GraphStore,
        mirror: VectorMirror | None = None,
        horizon_days: int = 3650,
        neighbours: int = 12,
        chunks: int = 80,
        nearest: int = 10,
    ):
        self.store = store
        self.resolver = EntityResolver(store)
        self.retriever = Retriever(store, mirror)
        self.horizon_days, self.neighbours, self.chunks, self.nearest = horizon_days, neighbours, chunks, nearest

    def answer(self, instance: Instance, articles: list[NewsArticle]) -> Answer:
        passages = self.retrieve(instance.question, instance.date)
        if not passages:
            return Answer(instance.answer_options.index(UNANSWERABLE), "nothing in the graph for the question")
        choice = reader.choose(instance.question, instance.answer_options, passages)
        return Answer(choice.index, choice.rationale)

    def retrieve(self, question: str, date: str) -> list[str]:
        day = day_key(date)
        start = shift_day(day, -self.horizon_days)
        named = self.entities_in(question, day)
        linked: list[str] = []
        for entity_id in named:
            # Over the limit, the interactions nearest the question day are the ones kept.
            for row in self.store.timeline(entity_id, start, day, as_of=day, limit=500, focus_day=day):
                linked.extend(x for x in (row.subject_id, row.object_id) if x and x not in named)
        around = list(dict.fromkeys(linked))[: self.neighbours]
        texts: dict[str, str] = {}
        for entity_id in [*named, *around]:
            for row in self.store.entity_chunks(entity_id, start, day, day, limit=self.chunks):
                texts.setdefault(row.id, row.text)
        for hit in self.retriever.semantic(CHUNKS, question, day, self.nearest, None):
            texts.setdefault(hit.id, hit.text)
        return list(texts.values())

    def entities_in(self, question: str, day: int) -> list[str]:
        """The entities the question names, among those the graph knew on its day."""
        found: list[str] = []
        for mention in reader.NAME.findall(question):
            mention = QUESTION_WORDS.sub("", mention).strip()
            if not mention:
                continue
            best, _ = self.resolver.resolve(mention, day)
            if best and best.score >= MIN_NAME_SCORE and best.id not in found:
                found.append(best.id)
        return found


class LLMAnswerer:
    name = "llm"

    def __init__(self, client: LLMClient, max_documents: int = 4, max_chars: int = 3000):
        self.client = client
        self.max_documents, self.max_chars = max_documents, max_chars

    def answer(self, instance: Instance, articles: list[NewsArticle]) -> Answer:
        shown = self.context(instance.question, articles)
        reply = self.client.complete(mcq_answer.build(instance.question, instance.answer_options, shown))
        index = mcq_answer.read_choice(reply, instance.answer_options)
        return Answer(index, (reply.text if reply else "no reply")[-400:])

    def context(self, question: str, articles: list[NewsArticle]) -> list[tuple[str, str]]:
        """The articles sharing most content words with the question, within the document and character caps
        (small local models have a 2k-token window; the paper's models had 128k)."""
        asked = reader.content(question)
        ranked = sorted(articles, key=lambda a: -len(asked & reader.content(a.text())))[: self.max_documents]
        shown: list[tuple[str, str]] = []
        budget = self.max_chars
        for article in ranked:
            text = article.text()[:budget]
            if not text:
                break
            shown.append((article.date, text))
            budget -= len(text)
        return shown
