"""IRB on this machine, in one run: questions generated per second from a synthetic interaction graph, and
retrieval nDCG@5 (max-passage) per retriever on the generated questions.

`.venv/bin/python -m bench.irb [--interactions N] [--per-chunk S] [--n Q] [--retrievers bm25,dense,hybrid] [--json]`
loads a fresh FalkorDB graph of N interactions (default 100000) between person and organisation entities (N/2 of
them, spread over 60 days so most (entity, day) have a unique partner). Interactions are stated S to a chunk
(default 5, the NEON paper's 5-6 sentence chunks: N/S chunks, one article each): every sentence names both
entities of its interaction and the deal's number, and the chunk's mentions are the entities of its sentences
(EntityDay counts). Times `generate(...)` for Q questions (default 200) as of the last day; then embeds each
distinct chunk once, in batches, into a local Qdrant folder (embedding time reported apart from the Qdrant
writes; MiniLM truncates at 256 word pieces, which 5 sentences stay under) and measures retrieval on the generated
set with every retriever asked for.

`measure_retrieval` is the reusable part: per retriever the mean nDCG@5, the share of questions whose relevant
documents all reached the top 5, the index build time (BM25: one index per distinct as_of day) and queries/s
(dense embeds each question: that is in its time; hybrid fuses BM25's list with the dense list the run already
holds for the question, so its time is the fusion's)."""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.synthetic import interaction_between, one_sentence_chunk
from newskg.core.ids import entity_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.settings import Settings
from newskg.core.timeaxes import day_from_key, day_iso, day_key
from newskg.evaluation.irb.generate import Generation, generate
from newskg.evaluation.irb.records import IRBQuestion
from newskg.evaluation.irb.retrieval import RETRIEVERS, Rankers, RetrieverName, load_passages, ndcg_at_k
from newskg.graph.mirror.embed import Embedder
from newskg.graph.mirror.qdrant import VectorMirror
from newskg.graph.store.asof import AsOf
from newskg.graph.store.store import GraphStore
from newskg.qa.retrieve import Retriever
from newskg.services.manager import ServiceManager
from newskg.wiring import open_embedder, open_graph, open_mirror

FIRST_DAY, DAYS = 20250101, 60
LAST_DAY = day_key(day_from_key(FIRST_DAY) + dt.timedelta(days=DAYS - 1))  # every fact is visible as of it
BATCH = 1000  # interactions a graph write
EMBED_BATCH = 512  # chunks an embedding call and Qdrant upsert
STDERR = Console(stderr=True)  # progress bars: stdout carries only the figures
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


@dataclass(frozen=True)
class MirrorFigures:
    chunks: int
    embed_s: float  # the embedder alone (all-MiniLM-L6-v2 on CPU unless configured otherwise)
    chunks_per_s: float
    upsert_s: float  # Qdrant writes (local mode) and payloads, without the embedding


class TimedEmbedder:
    """The configured embedder, with the seconds spent in it: embedding time apart from the Qdrant writes."""

    def __init__(self, inner: Embedder):
        self.inner = inner
        self.name = inner.name
        self.seconds = 0.0

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started


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


def chunk_of(n: int, per_chunk: int, pool: Sequence[Entity], rng: random.Random) -> tuple[Chunk, list[Interaction]]:
    """Chunk n: `per_chunk` interactions of one random day, each between two distinct entities, one sentence
    each, the first one dated."""
    day = day_key(day_from_key(FIRST_DAY) + dt.timedelta(days=rng.randrange(DAYS)))
    texts = []
    for _ in range(per_chunk):
        subject, obj = rng.sample(pool, 2)
        texts.append((subject, obj, f"{subject.name} {rng.choice(VERBS).format(k=rng.randint(2, 999))} {obj.name}"))
    # The day once, in the first sentence (as a news chunk dates its events once): fewer word pieces to embed.
    sentences = [f"{text}." for _, _, text in texts]
    sentences[0] = f"On {day_iso(day)}, {sentences[0]}"
    first = one_sentence_chunk(n, sentences[0], day, prefix="irb_bench")
    chunk = first.model_copy(
        update={"text": " ".join(sentences), "sentences": sentences, "sentence_end": len(sentences)}
    )
    interactions = [
        interaction_between(
            s, o, text, day, ingested_ms=chunk.ingested_ms, chunk_ids=[chunk.id], ingested_at=chunk.ingested_at
        )
        for s, o, text in texts
    ]
    return chunk, interactions


def load(store: GraphStore, interactions: int, per_chunk: int, seed: int = 7) -> list[tuple[Chunk, list[str]]]:
    """The graph, written in batches of about BATCH interactions with their chunks and mentions; the chunks with
    the entities they mention (the mirror's payload)."""
    rng = random.Random(seed)
    pool = entities(max(50, interactions // 2), rng)
    chunks: list[tuple[Chunk, list[str]]] = []
    per_batch = max(1, BATCH // per_chunk)
    total = -(-interactions // per_chunk)
    with Progress(console=STDERR) as progress:
        task = progress.add_task("graph", total=total * per_chunk)
        for start in range(0, total, per_batch):
            made = [chunk_of(n, per_chunk, pool, rng) for n in range(start, min(total, start + per_batch))]
            mentioned = [(c, sorted({e for x in xs for e in (x.subject_id, x.object_id or "")})) for c, xs in made]
            store.write_batch(
                chunks=[c for c, _ in made],
                entities=pool if start == 0 else (),
                mentions=[(c.id, e) for c, ids in mentioned for e in ids],
                interactions=[x for _, xs in made for x in xs],
            )
            chunks += mentioned
            progress.advance(task, len(made) * per_chunk)
    return chunks


def mirror_chunks(settings: Settings, chunks: Sequence[tuple[Chunk, list[str]]]) -> tuple[VectorMirror, MirrorFigures]:
    """Each distinct chunk embedded once, EMBED_BATCH a call, into the local Qdrant folder."""
    timed = TimedEmbedder(open_embedder(settings))
    mirror = open_mirror(settings, timed)
    unique = list({c.id: (c, ids) for c, ids in chunks}.values())
    started = time.perf_counter()
    with Progress(console=STDERR) as progress:
        task = progress.add_task("embed + mirror", total=len(unique))
        for start in range(0, len(unique), EMBED_BATCH):
            batch = unique[start : start + EMBED_BATCH]
            mirror.upsert_chunks(batch)
            progress.advance(task, len(batch))
    total = time.perf_counter() - started
    figures = MirrorFigures(
        chunks=len(unique),
        embed_s=round(timed.seconds, 1),
        chunks_per_s=round(len(unique) / timed.seconds, 1) if timed.seconds else 0.0,
        upsert_s=round(total - timed.seconds, 1),
    )
    return mirror, figures


# --- The run ----------------------------------------------------------------------------------------------------
def measure_generation(
    store: GraphStore, n: int, interactions: int, build_s: float
) -> tuple[Generation, GenerationFigures]:
    with Progress(console=STDERR) as progress:
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


def print_figures(gen: GenerationFigures, mirror: MirrorFigures | None, figures: list[RetrievalFigures]) -> None:
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
    if mirror:
        console.print(
            f"mirror: {mirror.chunks} distinct chunks embedded in {mirror.embed_s} s ({mirror.chunks_per_s}/s), "
            f"Qdrant writes {mirror.upsert_s} s"
        )
    console.print_json(
        data={
            "generation": asdict(gen),
            "mirror": asdict(mirror) if mirror else None,
            "retrieval": [asdict(f) for f in figures],
        }
    )


def named_figures(
    gen: GenerationFigures, mirror: MirrorFigures | None, figures: list[RetrievalFigures]
) -> dict[str, Figure]:
    """The --json figures: dense and hybrid nDCG@5 against BM25's as their baseline."""
    named = {
        "irb_graph_build_s": figure(gen.build_s, "s"),
        "irb_questions_per_s": figure(gen.questions_per_s, "questions/s"),
        "irb_questions": figure(gen.questions, "questions"),
    }
    if mirror:
        named["irb_embed_chunks_per_s"] = figure(mirror.chunks_per_s, "chunks/s")
        named["irb_embed_s"] = figure(mirror.embed_s, "s")
    bm25 = next((f.ndcg_at_5 for f in figures if f.retriever == "bm25"), None)
    for f in figures:
        baseline = None if f.retriever == "bm25" else bm25
        named[f"irb_ndcg5_{f.retriever}"] = figure(f.ndcg_at_5, "nDCG@5", baseline)
        named[f"irb_retrieval_right_{f.retriever}"] = figure(f.retrieval_right, "share")
        named[f"irb_queries_per_s_{f.retriever}"] = figure(f.queries_per_s, "queries/s")
    return named


def retrievers_of(value: str) -> list[RetrieverName]:
    wanted = {v.strip() for v in value.split(",") if v.strip()}
    unknown = wanted - set(RETRIEVERS)
    if unknown or not wanted:
        raise SystemExit(f"--retrievers: {', '.join(sorted(unknown)) or 'nothing given'}; choose from {RETRIEVERS}")
    return [r for r in RETRIEVERS if r in wanted]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--interactions", type=int, default=100_000, help="interactions in the graph")
    parser.add_argument("--per-chunk", type=int, default=5, help="interactions (sentences) stated by each chunk")
    parser.add_argument("--n", type=int, default=200, help="questions to generate")
    parser.add_argument(
        "--retrievers", default="bm25,dense,hybrid", help="comma list; dense and hybrid embed every chunk first"
    )
    parser.add_argument("--json", action="store_true", help="print only the figures, as one JSON object")
    args = parser.parse_args()
    retrievers = retrievers_of(args.retrievers)
    data_dir = Path(tempfile.mkdtemp(prefix="bench-irb-"))
    # pydantic-settings: its init takes _env_file and every field has a default; pyright sees neither
    settings = Settings(data_dir=data_dir, graph_database="bench_irb", _env_file=None)  # pyright: ignore[reportCallIssue]
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    mirror_figures: MirrorFigures | None = None
    try:
        settings = settings.model_copy(update={"graph_uri": manager.state.load()["graph"].address})
        store = GraphStore(open_graph(settings))
        store.init()
        started = time.perf_counter()
        chunks = load(store, args.interactions, args.per_chunk)
        build_s = time.perf_counter() - started
        made, gen = measure_generation(store, args.n, args.interactions, build_s)
        STDERR.print_json(data={"generation": asdict(gen)})  # kept even if a later step is stopped
        mirror = None
        if set(retrievers) - {"bm25"}:
            mirror, mirror_figures = mirror_chunks(settings, chunks)
            STDERR.print_json(data={"mirror": asdict(mirror_figures)})
        try:
            figures = measure_retrieval(store, Retriever(store, mirror), made.questions, retrievers)
        finally:
            if mirror:
                mirror.close()
    finally:
        manager.down()
        shutil.rmtree(data_dir, ignore_errors=True)  # the graph and the Qdrant folder: GBs at 100k
    if args.json:
        emit(named_figures(gen, mirror_figures, figures), " ".join(["python -m bench.irb", *sys.argv[1:]]))
    else:
        print_figures(gen, mirror_figures, figures)


if __name__ == "__main__":
    main()
