"""Graph and mirror write speed on this machine.

  1. interactions/s written with batched UNWIND … MERGE (--batch rows a statement) against one MERGE statement
     per row (the baseline, same run, same data shape, indexes on), goal >= 20x;
  2. mirror upserts/s: qdrant-client local mode with the MiniLM embedding included, and the upsert alone
     (precomputed vectors);
  3. the mirror's read-back: interactions/s read back from the graph by id (graph/mirror/sync.py: the stage
     upserts the mirror with what the graph holds after its write, so payload times equal the graph's), to set
     against the embedding that every mirrored row needs anyway.
Run: `make bench` or `.venv/bin/python -m bench.graph [--rows N]`.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

from qdrant_client import models
from rich.console import Console
from rich.table import Table

from bench.figures import emit, figure
from bench.synthetic import interaction_between
from core.ids import chunk_id, entity_id, point_uuid, source_id
from core.records import Chunk, Entity, Interaction
from core.settings import Settings
from graph.mirror.embed import MiniLMEmbedder
from graph.mirror.qdrant import INTERACTIONS, VectorMirror, interaction_payload
from graph.store import writes
from graph.store.store import GraphStore, _interaction_row
from newskg.services.manager import ServiceManager
from newskg.wiring import open_graph, open_qdrant

VERBS = ["met", "praised", "sued", "joined", "visited", "criticised", "signed with", "performed with"]


def synthetic(n: int, rng: random.Random) -> tuple[list[Chunk], list[Entity], list[Interaction]]:
    entities = [Entity(id=entity_id(f"Person {k}", "PERSON"), name=f"Person {k}", type="PERSON") for k in range(500)]
    chunks, interactions = [], []
    for i in range(n):
        day = 20230101 + (i % 28)
        s, o = rng.sample(entities, 2)
        text = f"{s.name} {rng.choice(VERBS)} {o.name} in story {i}"
        if i % 5 == 0:
            chunks.append(
                Chunk(
                    id=chunk_id(f"chunk {i}"),
                    text=f"chunk {i}",
                    sentences=[],
                    article_id=f"a{i}",
                    article_ids=[f"a{i}"],
                    source="bench",
                    source_id=source_id("bench"),
                    day=day,
                    published="2023-01-01T00:00:00Z",
                    ingested_at="2023-01-01T00:00:00Z",
                    ingested_ms=i,
                    sentence_start=0,
                    sentence_end=1,
                )
            )
        interactions.append(interaction_between(s, o, text, day, ingested_ms=i, chunk_ids=[chunks[-1].id]))
    return chunks, entities, interactions


def graph_rates(settings: Settings, rows: int, batch: int) -> tuple[float, float, float]:
    rng = random.Random(3)
    chunks, entities, interactions = synthetic(rows, rng)
    store = GraphStore(open_graph(settings.model_copy(update={"graph_database": "bench_graph"})))
    store.conn.drop()
    store.init()
    store.write_batch(chunks=chunks, entities=entities)
    start = time.perf_counter()
    for i in range(0, len(interactions), batch):
        store.write_batch(interactions=interactions[i : i + batch])
    batched = len(interactions) / (time.perf_counter() - start)
    single_rows = [_interaction_row(i) for i in synthetic(1000, random.Random(4))[2]]
    start = time.perf_counter()
    for row in single_rows:
        store.conn.run(writes.INTERACTIONS, {"rows": [row]})
        if row["object_id"]:
            store.conn.run(writes.INTERACTION_OBJECTS, {"rows": [row]})
    per_row = len(single_rows) / (time.perf_counter() - start)
    ids = [i.id for i in interactions]
    start = time.perf_counter()
    for i in range(0, len(ids), 256):  # the page size of graph/mirror/sync.py
        store.interactions(ids[i : i + 256])
    readback = len(ids) / (time.perf_counter() - start)
    store.conn.drop()
    return batched, per_row, readback


def mirror_rates(settings: Settings, rows: int) -> tuple[float, float]:
    interactions = synthetic(rows, random.Random(5))[2]
    settings = settings.model_copy(update={"qdrant_path": Path(tempfile.mkdtemp(prefix="bench-qdrant-"))})
    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    mirror = VectorMirror(open_qdrant(settings), embedder)
    mirror.ensure()
    start = time.perf_counter()
    for i in range(0, len(interactions), 256):
        mirror.upsert_interactions(interactions[i : i + 256])
    with_embedding = len(interactions) / (time.perf_counter() - start)
    vectors = embedder.embed([i.text for i in interactions])
    points = [
        models.PointStruct(id=point_uuid(i.id + "-again"), vector=v, payload=interaction_payload(i))
        for i, v in zip(interactions, vectors, strict=True)
    ]
    start = time.perf_counter()
    for i in range(0, len(points), 256):
        mirror.client.upsert(mirror.name(INTERACTIONS), points[i : i + 256], wait=True)
    upsert_only = len(points) / (time.perf_counter() - start)
    mirror.close()
    return with_embedding, upsert_only


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--mirror-rows", type=int, default=2_000)
    parser.add_argument("--batch", type=int, default=1_000)
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="bench-graph-")), _env_file=None)
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    try:
        batched, per_row, readback = graph_rates(settings, args.rows, args.batch)
    finally:
        manager.down()
    with_embedding, upsert_only = mirror_rates(settings, args.mirror_rows)
    if args.json:
        figures = {
            "graph_batch_rows_per_s": figure(
                round(batched), f"interactions/s, batches of {args.batch} ({args.rows} rows)", round(per_row)
            ),
            "mirror_upserts_per_s": figure(
                round(with_embedding), f"upserts/s with MiniLM ({args.mirror_rows} rows)", round(upsert_only)
            ),
            "graph_readback_per_s": figure(round(readback), "interactions/s read back for the mirror"),
        }
        emit(figures, " ".join(["python -m bench.graph", *sys.argv[1:]]))
    table = Table(title="graph and mirror writes, this machine")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("baseline / goal", justify="right")
    table.add_row(
        f"interactions/s, UNWIND batches of {args.batch:,} ({args.rows} rows)",
        f"{batched:,.0f}",
        f"one MERGE per row {per_row:,.0f} ({batched / per_row:.1f}x; goal >= 20x)",
    )
    table.add_row(f"mirror upserts/s with MiniLM embedding ({args.mirror_rows} rows)", f"{with_embedding:,.0f}", "")
    table.add_row(
        "mirror upserts/s, vectors precomputed",
        f"{upsert_only:,.0f}",
        f"embedding costs {upsert_only / with_embedding:.1f}x",
    )
    table.add_row(
        "interactions/s read back from the graph for the mirror",
        f"{readback:,.0f}",
        f"adds {100 * with_embedding / readback:.1f}% to a mirrored row's cost",
    )
    Console(width=120, stderr=args.json).print(table)


if __name__ == "__main__":
    main()
