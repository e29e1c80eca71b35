"""IRB on this machine, in one run: questions generated per second from a synthetic interaction graph, and
retrieval nDCG@5 (max-passage) per retriever on the generated questions.

`.venv/bin/python -m bench.irb [--interactions N] [--n Q] [--dense]` loads a fresh FalkorDB graph of N
interactions (default 100000) between person and organisation entities (N/2 of them, spread over 60 days so most
(entity, day) have a unique partner), each stated by its own one-sentence chunk (one article each) that names both
entities and the deal's number, with the chunk's mentions (EntityDay counts); times `generate(...)` for Q questions
(default 200) as of the last day; then measures retrieval on the generated set: BM25 always, dense and hybrid with
`--dense` (embeds every chunk into a local Qdrant folder first: slow on 2 cores).

`measure_retrieval` is the reusable part: per retriever the mean nDCG@5, the share of questions whose relevant
documents all reached the top 5, the index build time (BM25: one index per distinct as_of day) and queries/s."""

from __future__ import annotations

import argparse
import datetime as dt
import random
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.synthetic import interaction_between, one_sentence_chunk
from core.ids import entity_id
from core.records import Chunk, Entity, Interaction
from core.settings import Settings
from core.timeaxes import day_from_key, day_iso, day_key
from evaluation.irb.generate import Generation, generate
from evaluation.irb.records import IRBQuestion
from evaluation.irb.retrieval import Rankers, RetrieverName, load_passages, ndcg_at_k
from graph.store.asof import AsOf
from graph.store.store import GraphStore
from newskg.services.manager import ServiceManager
from newskg.wiring import open_graph, open_mirror
from qa.retrieve import Retriever

FIRST_DAY, DAYS = 20250101, 60
LAST_DAY = day_key(day_from_key(FIRST_DAY) + dt.timedelta(days=DAYS - 1))  # every fact is visible as of it
BATCH = 1000
VERBS = ("signed a deal worth {k} million with", "paid {k} million to", "sold a {k} percent stake to")
SYLLABLES = ("ka", "lo", "mi", "ren", "to", "vas", "qui", "dor", "sel", "bra", "nu", "fen", "gar", "wil", "zo")


@dataclass(frozen=True)
class RetrievalFigures:
    retriever: str
    questions: int
    ndcg_at_5: float
    retrieval_right: float
    index_s: float  # building the per-day BM25 indexes (0 for dense: the mirror is already indexed)
    queries_per_s: float


@dataclass(frozen=True)
class GenerationFigures:
    interactions: int
    build_s: float
    questions: int
    seconds: float
    questions_per_s: float
    facts: int
    claims: int
    maskable: int
    two_hop_chains: int
    hops_2: int
    false_premise: int
    rejected: dict[str, int]


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


# --- The synthetic graph ----------------------------------------------------------------------------------------
def _word(rng: random.Random, syllables: int) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(syllables)).capitalize()


def entities(count: int, rng: random.Random) -> list[Entity]:
    """Half persons ("Kaloren Vasdor"), half organisations ("Mirento Group"); distinct names, no digits."""
    made: dict[str, Entity] = {}
    while len(made) < count:
        if len(made) % 2:
            name, kind = f"{_word(rng, 3)} {_word(rng, 3)}", "PERSON"
        else:
            name, kind = f"{_word(rng, 4)} Group", "ORG"
        made.setdefault(name, Entity(id=entity_id(name, kind), name=name, type=kind))
    return list(made.values())


def fact(n: int, pool: Sequence[Entity], rng: random.Random) -> tuple[Chunk, Interaction]:
    """Interaction n between two distinct entities on a random day, and the chunk that states it."""
    subject, obj = rng.sample(pool, 2)
    day = day_key(day_from_key(FIRST_DAY) + dt.timedelta(days=rng.randrange(DAYS)))
    text = f"{subject.name} {rng.choice(VERBS).format(k=rng.randint(2, 999))} {obj.name}"
    chunk = one_sentence_chunk(n, f"On {day_iso(day)}, {text}.", day, prefix="irb_bench")
    interaction = interaction_between(
        subject, obj, text, day, ingested_ms=chunk.ingested_ms, chunk_ids=[chunk.id], ingested_at=chunk.ingested_at
    )
    return chunk, interaction


def load(store: GraphStore, interactions: int, seed: int = 7) -> list[Chunk]:
    """The graph, written in batches of BATCH interactions with their chunks and mentions; the chunks."""
    rng = random.Random(seed)
    pool = entities(max(50, interactions // 2), rng)
    chunks: list[Chunk] = []
    with Progress() as progress:
        task = progress.add_task("graph", total=interactions)
        for start in range(0, interactions, BATCH):
            made = [fact(n, pool, rng) for n in range(start, min(interactions, start + BATCH))]
            batch = [c for c, _ in made]
            store.write_batch(
                chunks=batch,
                entities=pool if start == 0 else (),
                mentions=[(c.id, e) for c, x in made for e in (x.subject_id, x.object_id or "")],
                interactions=[x for _, x in made],
            )
            chunks += batch
            progress.advance(task, len(made))
    return chunks


# --- The run ----------------------------------------------------------------------------------------------------
def measure_generation(
    store: GraphStore, n: int, interactions: int, build_s: float
) -> tuple[Generation, GenerationFigures]:
    with Progress() as progress:
        task = progress.add_task("generate", total=n)
        started = time.perf_counter()
        made = generate(store, LAST_DAY, n=n, on_question=lambda: progress.advance(task))
        seconds = time.perf_counter() - started
    qs = made.questions
    figures = GenerationFigures(
        interactions=interactions,
        build_s=round(build_s, 1),
        questions=len(qs),
        seconds=round(seconds, 2),
        questions_per_s=round(len(qs) / seconds, 2) if seconds else 0.0,
        facts=made.facts,
        claims=made.claims,
        maskable=made.maskable,
        two_hop_chains=made.two_hop_chains,
        hops_2=sum(q.hops == 2 for q in qs),
        false_premise=sum(q.premise == "false" for q in qs),
        rejected=dict(sorted(made.rejected.items())),
    )
    return made, figures


def print_figures(gen: GenerationFigures, figures: list[RetrievalFigures]) -> None:
    console = Console()
    title = (
        f"IRB: {gen.questions} questions generated in {gen.seconds} s ({gen.questions_per_s}/s) from "
        f"{gen.interactions} interactions (graph built in {gen.build_s} s); retrieval on them (max-passage)"
    )
    table = Table(title=title)
    for column in ("retriever", "nDCG@5", "retrieval right", "index s", "queries/s"):
        table.add_column(column)
    for f in figures:
        table.add_row(
            f.retriever, f"{f.ndcg_at_5:.3f}", f"{f.retrieval_right:.3f}", f"{f.index_s}", f"{f.queries_per_s}"
        )
    console.print(table)
    console.print_json(data={"generation": asdict(gen), "retrieval": [asdict(f) for f in figures]})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interactions", type=int, default=100_000, help="interactions (one chunk each)")
    parser.add_argument("--n", type=int, default=200, help="questions to generate")
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
        started = time.perf_counter()
        chunks = load(store, args.interactions)
        build_s = time.perf_counter() - started
        made, gen = measure_generation(store, args.n, args.interactions, build_s)
        mirror = open_mirror(settings) if args.dense else None
        try:
            if mirror:
                for start in range(0, len(chunks), 256):
                    mirror.upsert_chunks([(c, []) for c in chunks[start : start + 256]])
            figures = measure_retrieval(store, Retriever(store, mirror), made.questions, ("bm25", "dense", "hybrid"))
        finally:
            if mirror:
                mirror.close()
    finally:
        manager.down()
    print_figures(gen, figures)


if __name__ == "__main__":
    main()
