"""IRB retrieval on this machine: nDCG@5 (max-passage) per retriever on an IRB set, and how long it took.

`measure_retrieval` is the reusable part (the generation benchmark calls it on its generated set, in the same
run): per retriever the mean nDCG@5, the share of questions whose relevant documents all reached the top 5,
the index build time (BM25: one index per distinct as_of day) and queries per second.

Standalone (`.venv/bin/python -m bench.irb [--facts N] [--questions Q] [--dense]`): a fresh FalkorDB graph of N
one-sentence chunks (one fact each, spread over 30 days, one article per chunk) and Q single-hop questions
constructed from random facts (the object masked); BM25 always, dense and hybrid with `--dense` (embeds every
chunk into a local Qdrant folder first: slow on 2 cores). Keep the default short."""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from core.records import Chunk
from core.settings import Settings
from core.timeaxes import day_iso, end_of_day_ms
from evaluation.irb.records import IRBQuestion, Keypoint, MaskedNode
from evaluation.irb.retrieval import Rankers, RetrieverName, load_passages, ndcg_at_k
from graph.store.asof import AsOf
from graph.store.store import GraphStore
from newskg.services.manager import ServiceManager
from newskg.wiring import open_graph, open_mirror
from qa.retrieve import Retriever

FIRST_DAY, LAST_DAY = 20250101, 20250128  # every fact is visible as of the last day
VERBS = ("founded", "acquired", "sued", "hired", "visited", "sponsored", "criticised", "joined")


@dataclass(frozen=True)
class RetrievalFigures:
    retriever: str
    questions: int
    ndcg_at_5: float
    retrieval_right: float
    index_s: float  # building the per-day BM25 indexes (0 for dense: the mirror is already indexed)
    queries_per_s: float


def measure_retrieval(
    store: GraphStore,
    retriever: Retriever | None,
    questions: Sequence[IRBQuestion],
    retrievers: Sequence[RetrieverName],
) -> list[RetrievalFigures]:
    """nDCG@5 and timing per retriever (the ones that need the mirror are skipped without one)."""
    rankers = Rankers(load_passages(store), retriever)
    started = time.perf_counter()
    for day in sorted({q.as_of for q in questions}):
        rankers.bm25.index(AsOf(day))
    index_s = time.perf_counter() - started
    figures: list[RetrievalFigures] = []
    for name in rankers.available(retrievers):
        scores: list[float] = []
        right = 0
        started = time.perf_counter()
        for q in questions:
            ranked = rankers.search(name, q.question, AsOf(q.as_of))
            scores.append(ndcg_at_k(ranked.documents, q.qrels))
            right += set(q.qrels) <= {p.article_id for p in ranked.passages}
        elapsed = time.perf_counter() - started
        n = max(1, len(questions))
        figures.append(
            RetrievalFigures(
                name,
                len(questions),
                round(sum(scores) / n, 4),
                round(right / n, 4),
                round(index_s if name != "dense" else 0.0, 3),
                round(len(questions) / elapsed, 1) if elapsed else 0.0,
            )
        )
    return figures


def _day(n: int) -> int:
    return FIRST_DAY + n % 28  # January 2025: valid day keys


def _chunk(n: int, text: str) -> Chunk:
    day = _day(n)
    return Chunk(
        id=f"c_irb_bench_{n}",
        text=text,
        sentences=[text],
        article_id=f"a_irb_bench_{n}",
        article_ids=[f"a_irb_bench_{n}"],
        source="bench",
        source_id="s_bench",
        url=f"https://bench.invalid/{n}",
        day=day,
        published=day_iso(day),
        ingested_at=f"{day_iso(day)}T12:00:00Z",
        ingested_ms=end_of_day_ms(day) - 1000,
        sentence_start=0,
        sentence_end=1,
    )


def load(store: GraphStore, facts: int, questions: int, seed: int = 7) -> tuple[list[Chunk], list[IRBQuestion]]:
    rng = random.Random(seed)
    orgs = [f"Org{rng.randrange(10**6):06d} Holdings" for _ in range(max(10, facts // 4))]
    people = [f"Person{rng.randrange(10**6):06d} Lee" for _ in range(max(10, facts // 4))]
    chunks, made = [], []
    for n in range(facts):
        subject, verb, obj = rng.choice(people), rng.choice(VERBS), rng.choice(orgs)
        chunks.append(_chunk(n, f"{subject} {verb} {obj} in a deal worth {rng.randint(1, 999)} million."))
    for start in range(0, len(chunks), 1000):
        store.write_batch(chunks=chunks[start : start + 1000])
    for n in rng.sample(range(facts), min(questions, facts)):
        c = chunks[n]
        subject, verb, *rest = c.text.split(" ")
        obj = " ".join(rest[:2])
        kp = Keypoint(
            text=c.text, interaction_id=f"i{n}", subject_id=subject, object_id=obj, event_day=c.day,
            chunk_ids=[c.id], article_ids=[c.article_id],
        )  # fmt: skip
        made.append(
            IRBQuestion(
                id=f"q{n}", question=f"Which company did {subject} {verb} in a deal?", answer=obj,
                as_of=LAST_DAY, hops=1, popularity=1, masked=MaskedNode(entity_id=obj, name=obj, role="object"),
                keypoints=[kp], qrels={c.article_id: 1}, source="news",
            )
        )  # fmt: skip
    return chunks, made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--facts", type=int, default=5000, help="chunks, one fact each")
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--dense", action="store_true", help="also dense and hybrid (embeds every chunk first)")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-irb-"))
    # pydantic-settings: its init takes _env_file and every field has a default; pyright sees neither
    settings = Settings(data_dir=data_dir, graph_database="bench_irb", _env_file=None)  # pyright: ignore[reportCallIssue]
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    try:
        settings = settings.model_copy(update={"graph_uri": manager.state.load()["graph"].address})
        store = GraphStore(open_graph(settings))
        store.init()
        chunks, questions = load(store, args.facts, args.questions)
        mirror = open_mirror(settings) if args.dense else None
        try:
            if mirror:
                for start in range(0, len(chunks), 256):
                    mirror.upsert_chunks([(c, []) for c in chunks[start : start + 256]])
            figures = measure_retrieval(store, Retriever(store, mirror), questions, ("bm25", "dense", "hybrid"))
        finally:
            if mirror:
                mirror.close()
    finally:
        manager.down()
    table = Table(title=f"IRB retrieval: {len(questions)} questions over {args.facts} chunks (max-passage, nDCG@5)")
    for column in ("retriever", "nDCG@5", "retrieval right", "index s", "queries/s"):
        table.add_column(column)
    for f in figures:
        table.add_row(
            f.retriever, f"{f.ndcg_at_5:.3f}", f"{f.retrieval_right:.3f}", f"{f.index_s}", f"{f.queries_per_s}"
        )
    Console().print(table)
    Console().print_json(data=[asdict(f) for f in figures])


if __name__ == "__main__":
    main()
