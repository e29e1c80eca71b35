"""Graph and mirror write speed on this machine.

  1. interactions/s written with full provenance through GraphStore.write_batch, --batch rows a call (each row: its
     chunk, article and source, the two entities the chunk mentions, the interaction with its event, published and
     ingested times: what the extract stage writes), --runs times into a fresh graph (min/median/max), against the
     same kind of rows written one write_batch per row (the baseline, same run, indexes on), goal >= 20x; with
     the CPU each batched row cost the graph server and this process (a figure a busy machine does not move much:
     1e6 / server µs per row is the most the server could write here with a core of its own);
  2. mirror upserts/s: the embedded mirror (Qdrant Edge) with the MiniLM embedding included, and the upsert alone
     (precomputed vectors);
  3. the mirror's read-back: interactions/s read back from the graph by id (graph/mirror/sync.py: the stage
     upserts the mirror with what the graph holds after its write, so payload times equal the graph's), to set
     against the embedding that every mirrored row needs anyway.
Run: `make bench` or `.venv/bin/python -m bench.graph [--rows N] [--runs 3] [--mirror-rows 0]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure, process_cpu_s
from bench.synthetic import interaction_between
from newskg.core.ids import chunk_id, entity_id, source_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.settings import Settings
from newskg.core.timeaxes import day_iso, end_of_day_ms
from newskg.graph.mirror.base import INTERACTIONS, interaction_payload
from newskg.graph.mirror.embed import MiniLMEmbedder
from newskg.graph.store.store import GraphStore
from newskg.services.manager import ServiceManager
from newskg.wiring import new_mirror, open_graph

VERBS = ["met", "praised", "sued", "joined", "visited", "criticised", "signed with", "performed with"]
SOURCES = [f"Wire {k}" for k in range(20)]


@dataclass(frozen=True)
class ProvenancedRow:
    """One row of a graph write with everything the extract stage writes for it (extract/stage.py `_write`): the
    chunk it was read in (with its article and source), the two entities the chunk mentions, and the interaction
    between them, with its three time axes (event day, published day, ingestion instant) all distinct."""

    chunk: Chunk
    entities: tuple[Entity, Entity]
    interaction: Interaction

    def write(self) -> dict[str, Any]:
        """The keyword arguments of GraphStore.write_batch for this row alone."""
        return provenance_batch([self])


def provenance_batch(rows: list[ProvenancedRow]) -> dict[str, Any]:
    """The keyword arguments of one GraphStore.write_batch for these rows, shaped as the extract stage sends them."""
    return {
        "chunks": [r.chunk for r in rows],
        "marked": {r.chunk.id: f"<e>{r.interaction.subject_name}</e> {r.chunk.text}" for r in rows},
        "entities": [e for r in rows for e in r.entities],
        "mentions": [(r.chunk.id, e.id) for r in rows for e in r.entities],
        "interactions": [r.interaction for r in rows],
    }


def synthetic(n: int, rng: random.Random, prefix: str = "b") -> list[ProvenancedRow]:
    """n rows, each its own chunk and article: published on a day of January 2023 about an event one to three days
    earlier, ingested some hours after publication (a few days later for one in ten: a backfill)."""
    entities = [Entity(id=entity_id(f"Person {k}", "PERSON"), name=f"Person {k}", type="PERSON") for k in range(500)]
    rows: list[ProvenancedRow] = []
    for i in range(n):
        published_day = 20230104 + (i % 25)
        event_day = published_day - 1 - i % 3
        ingested_ms = end_of_day_ms(published_day) - 3_600_000 * (1 + i % 12) + (86_400_000 * 3 if i % 10 == 0 else 0)
        source = SOURCES[i % len(SOURCES)]
        s, o = rng.sample(entities, 2)
        text = f"{s.name} {rng.choice(VERBS)} {o.name} in story {prefix}{i}"
        article = f"https://bench.invalid/{prefix}/{i}"
        chunk = Chunk(
            id=chunk_id(text),
            text=text,
            sentences=[text],
            article_id=article,
            article_ids=[article],
            source=source,
            source_id=source_id(source),
            url=article,
            title=f"Story {prefix}{i}",
            day=published_day,
            published=f"{day_iso(published_day)}T08:00:00Z",
            ingested_at=iso_ms(ingested_ms),
            ingested_ms=ingested_ms,
            sentence_start=0,
            sentence_end=1,
        )
        interaction = interaction_between(s, o, text, event_day, ingested_ms, [chunk.id], iso_ms(ingested_ms))
        interaction = interaction.model_copy(
            update={"published_day": published_day, "article_ids": [article], "source_ids": [chunk.source_id]}
        )
        rows.append(ProvenancedRow(chunk, (s, o), interaction))
    return rows


def iso_ms(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class GraphRates:
    batched: list[float]  # rows/s of each batched run, in run order
    per_row: float
    readback: float
    server_cpu_us: list[float] = field(default_factory=list[float])  # graph server CPU µs per row, per batched run
    client_cpu_us: list[float] = field(default_factory=list[float])  # this process's CPU µs per row, per batched run


def fresh_store(settings: Settings) -> GraphStore:
    store = GraphStore(open_graph(settings.model_copy(update={"graph_database": "bench_graph"})))
    store.conn.drop()
    store.init()
    return store


@dataclass(frozen=True)
class BatchedRun:
    rows_per_s: float
    server_cpu_us: float | None  # per row
    client_cpu_us: float  # per row


def batched_run(store: GraphStore, rows: list[ProvenancedRow], batch: int, server_pid: int | None) -> BatchedRun:
    server_start, client_start, start = process_cpu_s(server_pid), time.process_time(), time.perf_counter()
    for i in range(0, len(rows), batch):
        store.write_batch(**provenance_batch(rows[i : i + batch]))
    wall, client = time.perf_counter() - start, time.process_time() - client_start
    server_end = process_cpu_s(server_pid)
    server = None if server_start is None or server_end is None else server_end - server_start
    return BatchedRun(len(rows) / wall, None if server is None else 1e6 * server / len(rows), 1e6 * client / len(rows))


def graph_rates(
    settings: Settings, rows: int, batch: int, runs: int, per_row_rows: int, server_pid: int | None = None
) -> GraphRates:
    """Each batched run writes `rows` new rows into a fresh graph (the same rows each run); the per-row baseline
    then writes other rows, one write_batch per row, into the graph the last run left (as large or larger than the
    batched runs ever saw, so the baseline is not favoured by a small graph)."""
    data = synthetic(rows, random.Random(3))
    batched: list[BatchedRun] = []
    store = fresh_store(settings)
    for _ in range(runs):
        store = fresh_store(settings)
        batched.append(batched_run(store, data, batch, server_pid))
    singles = synthetic(per_row_rows, random.Random(4), prefix="p")
    start = time.perf_counter()
    for row in singles:
        store.write_batch(**row.write())
    per_row = len(singles) / (time.perf_counter() - start)
    ids = [r.interaction.id for r in data]
    start = time.perf_counter()
    for i in range(0, len(ids), 256):  # the page size of graph/mirror/sync.py
        store.interactions(ids[i : i + 256])
    readback = len(ids) / (time.perf_counter() - start)
    store.conn.drop()
    server_cpu = [r.server_cpu_us for r in batched if r.server_cpu_us is not None]
    return GraphRates(
        [r.rows_per_s for r in batched], per_row, readback, server_cpu, [r.client_cpu_us for r in batched]
    )


def mirror_rates(settings: Settings, rows: int) -> tuple[float, float]:
    interactions = [r.interaction for r in synthetic(rows, random.Random(5))]
    settings = settings.model_copy(update={"qdrant_path": Path(tempfile.mkdtemp(prefix="bench-qdrant-"))})
    embedder = MiniLMEmbedder()
    embedder.embed(["warm up"])
    mirror = new_mirror(settings, embedder)  # the embedded default (Qdrant Edge) in a folder of its own
    mirror.ensure()
    start = time.perf_counter()
    for i in range(0, len(interactions), 256):
        mirror.upsert_interactions(interactions[i : i + 256])
    with_embedding = len(interactions) / (time.perf_counter() - start)
    vectors = embedder.embed([i.text for i in interactions])
    points = [
        (interaction_payload(i) | {"graph_id": i.id + "-again"}, v) for i, v in zip(interactions, vectors, strict=True)
    ]
    start = time.perf_counter()
    for i in range(0, len(points), 256):
        mirror.upsert_vectors(INTERACTIONS, points[i : i + 256])
    upsert_only = len(points) / (time.perf_counter() - start)
    mirror.close()
    return with_embedding, upsert_only


def graph_figures(graph: GraphRates, shape: str) -> dict[str, Figure]:
    """graph_batch_rows_per_s: the median of the batched runs against the per-row baseline; its min and max apart."""
    low, median, high = min(graph.batched), statistics.median(graph.batched), max(graph.batched)
    return {
        "graph_batch_rows_per_s": figure(
            round(median),
            f"interactions/s with full provenance, median ({shape}: min {low:,.0f}, max {high:,.0f}); "
            "baseline: one write per row",
            round(graph.per_row),
        ),
        "graph_batch_rows_per_s_min": figure(round(low), f"interactions/s, slowest run ({shape})"),
        "graph_batch_rows_per_s_max": figure(round(high), f"interactions/s, fastest run ({shape})"),
        "graph_readback_per_s": figure(round(graph.readback), "interactions/s read back for the mirror"),
    } | cpu_figures(graph, shape)


def cpu_figures(graph: GraphRates, shape: str) -> dict[str, Figure]:
    """The CPU a batched row cost, median of the runs: the graph server's (its bound: 1e6 / µs rows/s on a core
    of its own) and this process's (building rows, encoding parameters)."""
    figures: dict[str, Figure] = {}
    if graph.server_cpu_us:
        server = statistics.median(graph.server_cpu_us)
        figures["graph_server_cpu_us_per_row"] = figure(
            round(server, 1), f"graph server CPU µs per interaction, median ({shape}); bound {1e6 / server:,.0f}/s"
        )
    if graph.client_cpu_us:
        figures["graph_client_cpu_us_per_row"] = figure(
            round(statistics.median(graph.client_cpu_us), 1), f"writer process CPU µs per interaction ({shape})"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000, help="rows written by each batched run")
    parser.add_argument("--batch", type=int, default=1_000, help="rows per write_batch in the batched runs")
    parser.add_argument("--runs", type=int, default=3, help="batched runs (min/median/max reported)")
    parser.add_argument("--per-row-rows", type=int, default=1_000, help="rows of the per-row baseline")
    parser.add_argument("--mirror-rows", type=int, default=2_000, help="0 skips the mirror measures")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="bench-graph-")), _env_file=None)
    manager = ServiceManager(settings)
    started = manager.up(only={"graph"})
    server_pid = next((s.pid for s in started if s.name == "graph"), None)
    try:
        graph = graph_rates(settings, args.rows, args.batch, args.runs, args.per_row_rows, server_pid)
    finally:
        manager.down()
    mirror = mirror_rates(settings, args.mirror_rows) if args.mirror_rows else None
    low, median, high = min(graph.batched), statistics.median(graph.batched), max(graph.batched)
    shape = f"batches of {args.batch:,}, {args.rows:,} rows, {args.runs} runs"
    if args.json:
        figures = graph_figures(graph, shape)
        if mirror:
            figures["mirror_upserts_per_s"] = figure(
                round(mirror[0]), f"upserts/s with MiniLM ({args.mirror_rows} rows)", round(mirror[1])
            )
        emit(figures, " ".join(["python -m bench.graph", *sys.argv[1:]]))
    table = Table(title="graph and mirror writes, this machine")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("baseline / goal", justify="right")
    table.add_row(
        f"interactions/s with full provenance, median ({shape})",
        f"{median:,.0f} (min {low:,.0f}, max {high:,.0f})",
        f"one write per row {graph.per_row:,.0f} ({median / graph.per_row:.1f}x; goal >= 20x)",
    )
    for name, cpu in cpu_figures(graph, shape).items():
        table.add_row(name, f"{cpu['value']:,}", cpu["unit"].split("; ")[-1] if "bound" in cpu["unit"] else "")
    table.add_row(
        "interactions/s read back from the graph for the mirror",
        f"{graph.readback:,.0f}",
        f"adds {100 * mirror[0] / graph.readback:.1f}% to a mirrored row's cost" if mirror else "",
    )
    if mirror:
        table.add_row(f"mirror upserts/s with MiniLM embedding ({args.mirror_rows} rows)", f"{mirror[0]:,.0f}", "")
        table.add_row(
            "mirror upserts/s, vectors precomputed",
            f"{mirror[1]:,.0f}",
            f"embedding costs {mirror[1] / mirror[0]:.1f}x",
        )
    Console(width=120, stderr=args.json).print(table)


if __name__ == "__main__":
    main()
