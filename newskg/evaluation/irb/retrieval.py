"""IRB retrieval (paper §3.4): nDCG@k against a question's qrels, documents (articles) ranked by their best
passage (chunk) — max-passage — for BM25, dense (the Qdrant mirror) and their reciprocal-rank fusion, all as of
the question's day.

As of D, efficiently: the graph's chunks are read once (`load_passages`); BM25 builds one index per distinct
as_of day over the chunks visible that day (published on or before D, ingested by the end of D — the same
bounds as graph/store/asof.py), cached for the run: a set has few distinct days, and an index per day keeps the
ranking exact (a post-filtered global index would need an unbounded candidate list to be exact). Dense search
filters in the mirror exactly as `qa.retrieve.Retriever.semantic` does (it is that method).

A passage's document is its chunk's own article (`Chunk.article_id`, the article it was kept from, whose
publication and ingestion times are the chunk's): articles that only carried a near-duplicate sighting may
have been ingested later, so naming them could leak a document from after D."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal, cast, get_args

import bm25s  # pyright: ignore[reportMissingTypeStubs]  (bm25s ships no type information)
import numpy as np
from numpy.typing import NDArray

from newskg.graph.mirror.qdrant import CHUNKS
from newskg.graph.store.asof import AsOf
from newskg.graph.store.store import GraphStore
from newskg.qa.fusion import rrf
from newskg.qa.retrieve import Retriever

RetrieverName = Literal["bm25", "dense", "hybrid"]
RETRIEVERS: tuple[RetrieverName, ...] = get_args(RetrieverName)
K = 5  # documents scored by nDCG@k and passages given to the RAG answerer (the paper's k)
CANDIDATES = 50  # passages read per retriever before max-passage, so k distinct documents remain
READ_BATCH = 500


@dataclass(frozen=True)
class Passage:
    chunk_id: str
    article_id: str
    text: str
    day: int
    ingested_ms: int

    def visible(self, as_of: AsOf) -> bool:
        return self.day <= as_of.day and self.ingested_ms <= as_of.ms


@dataclass(frozen=True)
class Ranked:
    """One retriever's answer to one question: passages best first, and the documents they rank."""

    passages: list[Passage]
    documents: list[str]  # article ids by their best passage, best first


def load_passages(store: GraphStore) -> dict[str, Passage]:
    """Every chunk of the graph with its time fields; the as-of bounds are applied per question."""
    ids = sorted(store.ids("Chunk"))
    found: dict[str, Passage] = {}
    for start in range(0, len(ids), READ_BATCH):
        for chunk, _, _ in store.chunks(ids[start : start + READ_BATCH]):
            found[chunk.id] = Passage(chunk.id, chunk.article_id, chunk.text, chunk.day, chunk.ingested_ms)
    return found


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(rank + 2) for rank, g in enumerate(gains))


def ndcg_at_k(documents: Sequence[str], qrels: dict[str, int], k: int = K) -> float:
    """nDCG@k with graded gains as given (IRB's are all 1); 0 when the question has no relevant document."""
    ideal = dcg(sorted(qrels.values(), reverse=True)[:k])
    if ideal <= 0:
        return 0.0
    return dcg([qrels.get(d, 0) for d in documents[:k]]) / ideal


def max_passage(passages: Iterable[Passage]) -> list[str]:
    """Documents in the order of their best passage (passages come best first): each article scores as its
    highest-ranked chunk."""
    return list(dict.fromkeys(p.article_id for p in passages))


def rank(passages: Sequence[Passage], k: int = K) -> Ranked:
    return Ranked(list(passages[:k]), max_passage(passages)[:k])


@dataclass
class _DayIndex:
    passages: list[Passage]
    model: bm25s.BM25 | None  # None: nothing visible that day


@dataclass
class BM25Ranker:
    """BM25 over the chunks visible as of a day: one index per distinct day, built on first use."""

    passages: dict[str, Passage]
    _indexes: dict[AsOf, _DayIndex] = field(default_factory=dict[AsOf, _DayIndex])

    def index(self, as_of: AsOf) -> _DayIndex:
        if as_of not in self._indexes:
            visible = sorted((p for p in self.passages.values() if p.visible(as_of)), key=lambda p: p.chunk_id)
            model = None
            if visible:
                model = bm25s.BM25()
                # bm25s is untyped: its corpus and tokens are unknown to pyright
                texts = [p.text for p in visible]
                tokenized = bm25s.tokenize(texts, stopwords="en", show_progress=False)  # pyright: ignore[reportUnknownMemberType]
                model.index(tokenized, show_progress=False)  # pyright: ignore[reportUnknownMemberType]
            self._indexes[as_of] = _DayIndex(visible, model)
        return self._indexes[as_of]

    def search(self, question: str, as_of: AsOf, limit: int = CANDIDATES) -> list[Passage]:
        day = self.index(as_of)
        if day.model is None:
            return []
        # As strings: the index maps them to its own vocabulary (unknown words score nothing).
        tokens = bm25s.tokenize([question], stopwords="en", return_ids=False, show_progress=False)  # pyright: ignore[reportUnknownMemberType]  (bm25s is untyped)
        n = min(limit, len(day.passages))
        if not tokens or not tokens[0]:  # only stopwords: nothing to match
            return []
        # bm25s is untyped: retrieve returns the (documents, scores) arrays, one row per query
        found, scores = cast(
            "tuple[NDArray[np.generic], NDArray[np.generic]]",
            day.model.retrieve(tokens, k=n, show_progress=False),
        )
        order = np.asarray(found)[0].tolist()
        weights = np.asarray(scores)[0].tolist()
        # A zero score shares no term with the question: not retrieved.
        return [day.passages[int(i)] for i, s in zip(order, weights, strict=True) if float(s) > 0]


class DenseRanker:
    """The mirror's chunk collection, as of the day, through the QA retriever's own semantic search."""

    def __init__(self, retriever: Retriever, passages: dict[str, Passage]):
        self.retriever = retriever
        self.passages = passages
        # A question's dense list, kept for the run: hybrid fuses the very list dense ranked (one embedding and
        # one mirror search a question, not two; local Qdrant filters in Python, so a search is the slow part).
        self._found: dict[tuple[str, AsOf, int], list[Passage]] = {}

    def search(self, question: str, as_of: AsOf, limit: int = CANDIDATES) -> list[Passage]:
        key = (question, as_of, limit)
        if key not in self._found:
            found = self.retriever.semantic(CHUNKS, question, as_of, limit, None)
            # Chunks the graph read does not hold (a mirror ahead of the graph) have no document: skipped.
            self._found[key] = [
                self.passages[e.id] for e in found if e.id in self.passages and self.passages[e.id].visible(as_of)
            ]
        return list(self._found[key])


def fuse(lists: Sequence[Sequence[Passage]]) -> list[Passage]:
    """Reciprocal rank fusion of passage lists (qa.fusion.rrf), ties by chunk id."""
    pool = {p.chunk_id: p for ranked in lists for p in ranked}
    scores = rrf([[p.chunk_id for p in ranked] for ranked in lists])
    return [pool[c] for c in sorted(pool, key=lambda c: (-scores[c], c))]


class Rankers:
    """The retrievers of one run over one graph snapshot; dense and hybrid need the mirror."""

    def __init__(self, passages: dict[str, Passage], retriever: Retriever | None):
        self.bm25 = BM25Ranker(passages)
        self.dense = DenseRanker(retriever, passages) if retriever and retriever.mirror else None

    def available(self, wanted: Sequence[RetrieverName]) -> list[RetrieverName]:
        return [r for r in wanted if r == "bm25" or self.dense is not None]

    def search(self, name: RetrieverName, question: str, as_of: AsOf, k: int = K) -> Ranked:
        if name == "bm25":
            return rank(self.bm25.search(question, as_of), k)
        if self.dense is None:
            raise ValueError(f"{name} retrieval needs the vector mirror")
        if name == "dense":
            return rank(self.dense.search(question, as_of), k)
        return rank(fuse([self.bm25.search(question, as_of), self.dense.search(question, as_of)]), k)
