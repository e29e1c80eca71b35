"""The mirror's filtered nearest-neighbour query, Qdrant Edge against qdrant-client local mode, in the same run.

Loads N interactions (default 20,000, the QA bench's facts, bench/qa_graph.py) with the payload the pipeline
writes and seeded random 384-d unit vectors into both embedded engines through the mirror interface's bulk path
(`upsert_vectors`): a Qdrant Edge shard in a temporary folder (the write that leaves N points unoptimized builds
its int8 copy and payload indexes, so Edge's load includes them), and qdrant-client local mode in memory (its
on-disk form commits each point to SQLite: ~45 points/s here; queries search the same in-memory arrays either way).
Then the same Q query vectors through `search_vector` with the two as-of filters QA sends:
- entity: as of a day, one entity's facts (hybrid retrieval's semantic list; selective: ~10 of 20k points);
- as_of: as of a day only (generic retrieval; about half the points pass).
Prints p50/p95 per engine and filter, the ratio local mode / Edge, the load seconds, and Edge's recall@10 against
local mode's exact answers (Edge scans an int8 copy and rescores the best: close to exact).
Run: `.venv/bin/python -m bench.mirror [--rows 20000] [--queries 200] [--json]`."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from qdrant_client import QdrantClient
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.qa import DIM, unit_vectors
from bench.qa_graph import entities, interactions
from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.mirror.base import INTERACTIONS, AsOfFilter, VectorMirror, interaction_payload
from newskg.graph.mirror.edge import EdgeMirror
from newskg.graph.mirror.qdrant import QdrantClientMirror

FILTERS = ("entity", "as_of")
K = 10


class NoEmbedder:
    """The bench sends vectors: nothing is embedded."""

    name, dim = "none", DIM

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("the bench embeds nothing")


def load(mirror: VectorMirror, rows: int) -> float:
    """The points by the bulk path, and whatever index the engine builds: seconds."""
    mirror.ensure()
    rng = np.random.default_rng(7)
    facts = list(interactions(rows))
    start = time.perf_counter()
    for at in range(0, rows, 1000):
        batch = facts[at : at + 1000]
        vectors = unit_vectors(rng, len(batch))
        items = [(interaction_payload(i), v.tolist()) for i, v in zip(batch, vectors, strict=True)]
        mirror.upsert_vectors(INTERACTIONS, items)
    mirror.optimize()
    return time.perf_counter() - start


def queries(n: int, rows: int) -> list[tuple[list[float], dict[str, AsOfFilter]]]:
    """n query vectors, each with both filters as of a day in the loaded quarter for a random entity."""
    rng = np.random.default_rng(11)
    people = entities(rows)
    days = [int(f"2023{m:02d}{d:02d}") for m in (1, 2, 3) for d in range(1, 29)]
    found = []
    for v in unit_vectors(rng, n):
        day = days[int(rng.integers(len(days)))]
        entity = people[int(rng.integers(len(people)))].id
        ms = end_of_day_ms(day)
        filters = {
            "entity": AsOfFilter(day=day, ingested_ms=ms, entity_id=entity),
            "as_of": AsOfFilter(day=day, ingested_ms=ms),
        }
        found.append((v.tolist(), filters))
    return found


def timed(search: Callable[[], list[str]]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    ids = search()
    return (time.perf_counter() - start) * 1000, ids


def run(mirror: VectorMirror, asked: list[tuple[list[float], dict[str, AsOfFilter]]], kind: str):
    """(latencies ms, ids per query) for one filter kind, after one warm query."""
    mirror.search_vector(INTERACTIONS, asked[0][0], asked[0][1][kind], K)
    results = [
        timed(lambda v=v, f=f: [h.graph_id for h in mirror.search_vector(INTERACTIONS, v, f[kind], K)])
        for v, f in asked
    ]
    return [ms for ms, _ in results], [ids for _, ids in results]


def pct(values: list[float], q: float) -> float:
    return round(statistics.quantiles(values, n=100)[int(q) - 1], 3)


def recall(found: list[list[str]], exact: list[list[str]]) -> float:
    hits = sum(len(set(f) & set(e)) for f, e in zip(found, exact, strict=True))
    return round(hits / max(sum(len(e) for e in exact), 1), 4)


def measure(rows: int, n: int, console: Console) -> dict[str, Figure]:
    edge = EdgeMirror(Path(tempfile.mkdtemp(prefix="bench-mirror-")), NoEmbedder(), index_after=rows)
    local = QdrantClientMirror(QdrantClient(location=":memory:"), NoEmbedder())
    loads = {"edge": load(edge, rows), "local": load(local, rows)}
    shard = edge._shard(INTERACTIONS)  # the engine's own count: every point in HNSW before the queries
    assert shard is not None and shard.info().indexed_vectors_count == rows, "Edge did not index the load"
    console.print(f"loaded {rows:,} points: {loads}")
    asked = queries(n, rows)
    found: dict[str, Figure] = {}
    shape = f"{rows:,} x {DIM}, k={K}, {n} queries"
    for kind in FILTERS:
        edge_ms, edge_ids = run(edge, asked, kind)
        local_ms, local_ids = run(local, asked, kind)
        for q in (50, 95):
            found[f"mirror_{kind}_filter_p{q}_ms_edge"] = figure(
                pct(edge_ms, q), f"ms, Qdrant Edge, {shape}; baseline: qdrant-client local mode", pct(local_ms, q)
            )
        found[f"mirror_{kind}_filter_speedup"] = figure(
            round(statistics.median(local_ms) / statistics.median(edge_ms), 1), "x, local mode p50 / Edge p50"
        )
        found[f"mirror_{kind}_filter_recall_at_10_edge"] = figure(
            recall(edge_ids, local_ids), "Edge's hits among local mode's exact top 10"
        )
    found["mirror_load_s_edge"] = figure(
        round(loads["edge"], 1),
        f"s, {rows:,} points upserted and indexed (HNSW); baseline: local mode",
        round(loads["local"], 1),
    )
    edge.close()
    local.close()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    console = Console(width=120, stderr=args.json)
    found = measure(args.rows, args.queries, console)
    if args.json:
        emit(found, " ".join(["python -m bench.mirror", *sys.argv[1:]]))
    table = Table(title=f"filtered nearest neighbours, {args.rows:,} x {DIM}")
    for column in ("figure", "value", "baseline", "ratio"):
        table.add_column(column)
    for name, f in found.items():
        table.add_row(name, str(f["value"]), str(f["baseline"]), str(f["ratio"]))
    console.print(table)


if __name__ == "__main__":
    main()
