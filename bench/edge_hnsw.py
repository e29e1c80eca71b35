"""The Qdrant Edge shard's layouts in one run on the same points: `int8`, the adapter's (graph/mirror/edge.py: no
HNSW graph, vectors on disk, an int8 copy of them in RAM scanned and the best rescored by the float32 ones), against
the three before it: `exact` (the same without the int8 copy: every search an exact scan of the vectors on disk),
`graph` (m=16 global graph, links per value block of the day, ingestion instant, entity and variant) and `tenant`
(Qdrant's multitenancy layout: m=0, a subgraph per entity, payload_m=32, entity_ids `is_tenant`, hnsw_ef 128).

Per layout: N interactions (bench/qa_graph.py's facts, the pipeline's payload, seeded random 384-d unit vectors)
loaded by the mirror's bulk path into a fresh shard; the build's CPU seconds (this process: the engine indexes in
it) and wall seconds. Then Q query vectors with the as-of filter QA sends (as of the last loaded day, so the filter
passes every point of the entity) for three kinds of entity: hubs (the N_HUBS busiest), mid (~1,000 facts) and
rare (3 to 10 facts), and without an entity (`as_of`, IRB's shape; `none`, the warm-up's limit-1 search): p50/p95
ms per search and recall@10 against the engine's exact search (`SearchParams(exact=True)`, same filter).
Run: `.venv/bin/python -m bench.edge_hnsw [--rows 100000] [--queries 100] [--layouts graph,tenant,exact,int8]
[--json]`."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

import numpy as np
from qdrant_edge import (
    HnswIndexConfig,
    IntegerIndexParams,
    KeywordIndexParams,
    Memory,
    Query,
    QueryRequest,
    SearchParams,
)
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.mirror import NoEmbedder
from bench.qa import unit_vectors
from bench.qa_graph import interactions
from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.mirror import edge
from newskg.graph.mirror.base import INTERACTIONS, AsOfFilter, interaction_payload

K = 10
N_HUBS = 5
GRAPH_LINKED = frozenset({"published_day", "day", "ingested_ms", "entity_ids", "variant"})
TENANT = "entity_ids"
APPROXIMATE, EXACT = SearchParams(), SearchParams(exact=True)


class Layout(NamedTuple):
    hnsw: HnswIndexConfig
    linked: frozenset[str]  # the payload fields with HNSW links of their own
    tenant: bool  # the entity field is_tenant
    entity_search: SearchParams  # a search filtered by an entity
    other_search: SearchParams  # a search without one
    vectors: Memory | None  # None: the engine's default, in RAM
    int8: bool = False  # an int8 copy of the vectors (edge.QUANTIZATION)


LAYOUTS = {
    "graph": Layout(
        HnswIndexConfig(m=16, ef_construct=100, full_scan_threshold=10_000),
        GRAPH_LINKED,
        False,
        APPROXIMATE,
        APPROXIMATE,
        None,
    ),
    "tenant": Layout(
        HnswIndexConfig(m=0, ef_construct=200, full_scan_threshold=750, payload_m=32),
        frozenset({TENANT}),
        True,
        SearchParams(hnsw_ef=128),
        EXACT,
        None,
    ),
    "exact": Layout(edge.HNSW, frozenset(), False, edge.SEARCH, edge.SEARCH, edge.VECTOR_MEMORY),
    "int8": Layout(
        edge.HNSW, frozenset(), False, edge.QUANTIZED_SEARCH, edge.QUANTIZED_SEARCH, edge.VECTOR_MEMORY, True
    ),
}


@contextmanager
def layout(name: str) -> Iterator[Layout]:
    """The adapter with one layout's shard config and payload indexes."""
    chosen = LAYOUTS[name]
    saved = edge.HNSW, edge.VECTOR_MEMORY, edge.QUANTIZATION, edge.index_params
    edge.HNSW, edge.VECTOR_MEMORY = chosen.hnsw, chosen.vectors
    edge.QUANTIZATION = saved[2] if chosen.int8 else None

    def index_params(collection: str) -> dict[str, IntegerIndexParams | KeywordIndexParams]:
        def linked(field: str, p: IntegerIndexParams | KeywordIndexParams) -> IntegerIndexParams | KeywordIndexParams:
            if isinstance(p, IntegerIndexParams):
                return IntegerIndexParams(lookup=False, range=True, memory=p.memory, enable_hnsw=field in chosen.linked)
            tenant = True if chosen.tenant and field == TENANT else None
            return KeywordIndexParams(memory=p.memory, enable_hnsw=field in chosen.linked, is_tenant=tenant)

        return {field: linked(field, p) for field, p in saved[3](collection).items()}

    edge.index_params = index_params
    try:
        yield chosen
    finally:
        edge.HNSW, edge.VECTOR_MEMORY, edge.QUANTIZATION, edge.index_params = saved


def build(mirror: edge.EdgeMirror, rows: int) -> tuple[float, float]:
    """(CPU s, wall s) of the bulk load and its one index build."""
    mirror.ensure()
    rng = np.random.default_rng(7)
    facts = list(interactions(rows))
    cpu, wall = time.process_time(), time.perf_counter()
    with mirror.bulk():
        for at in range(0, rows, 1000):
            batch = facts[at : at + 1000]
            items = [
                (interaction_payload(i), v.tolist()) for i, v in zip(batch, unit_vectors(rng, len(batch)), strict=True)
            ]
            mirror.upsert_vectors(INTERACTIONS, items)
    return time.process_time() - cpu, time.perf_counter() - wall


def entity_kinds(rows: int) -> dict[str, list[str]]:
    counts = Counter(e for i in interactions(rows) for e in (i.subject_id, i.object_id) if e)
    ranked = counts.most_common()
    return {
        "hub": [e for e, _ in ranked[:N_HUBS]],
        "mid": [e for e, n in ranked if 700 <= n <= 1500][:20] or [ranked[len(ranked) // 100][0]],
        "rare": [e for e, n in ranked if 3 <= n <= 10][:50],
        "as_of": [""],
        "none": [""],
    }


def search(
    mirror: edge.EdgeMirror, vector: list[float], where: AsOfFilter | None, params: SearchParams, limit: int
) -> list[str]:
    shard = mirror._shard(INTERACTIONS)
    assert shard is not None
    request = QueryRequest(
        limit=limit,
        query=Query.Nearest(vector),
        filter=edge.as_of_filter(INTERACTIONS, where) if where else None,
        with_payload=["graph_id"],
        params=params,
    )
    return [p.payload["graph_id"] for p in shard.query(request) if p.payload]


def timed(call: Callable[[], list[str]]) -> tuple[float, list[str]]:
    start = time.perf_counter()
    ids = call()
    return (time.perf_counter() - start) * 1000, ids


def measure_kind(
    mirror: edge.EdgeMirror, chosen: Layout, kind: str, ids: list[str], day: int, n: int
) -> dict[str, float]:
    rng = np.random.default_rng(11)
    limit = 1 if kind == "none" else K
    asked = [(v.tolist(), ids[q % len(ids)]) for q, v in enumerate(unit_vectors(rng, n))]
    where = {
        e: None if kind == "none" else AsOfFilter(day=day, ingested_ms=end_of_day_ms(day), entity_id=e or None)
        for e in ids
    }
    params = chosen.entity_search if kind in ("hub", "mid", "rare") else chosen.other_search
    search(mirror, asked[0][0], where[asked[0][1]], params, limit)  # warm
    found = [timed(lambda v=v, e=e: search(mirror, v, where[e], params, limit)) for v, e in asked]
    exact = [search(mirror, v, where[e], EXACT, limit) for v, e in asked]
    hits = sum(len(set(f) & set(x)) for (_, f), x in zip(found, exact, strict=True))
    ms = [m for m, _ in found]
    q = statistics.quantiles(ms, n=100)
    return {"p50": round(q[49], 3), "p95": round(q[94], 3), "recall": round(hits / max(sum(map(len, exact)), 1), 4)}


def measure(rows: int, n: int, layouts: list[str], console: Console) -> dict[str, Figure]:
    kinds = entity_kinds(rows)
    day = max(i.published_day for i in interactions(rows))
    found: dict[str, Figure] = {}
    for name in layouts:
        with layout(name) as chosen:
            folder = Path(tempfile.mkdtemp(prefix=f"bench-edge-{name}-", dir=os.environ.get("NEWSKG_BENCH_TMP")))
            mirror = edge.EdgeMirror(folder, NoEmbedder(), index_after=rows)
            cpu, wall = build(mirror, rows)
            console.print(f"{name}: {rows:,} points built in {cpu:.1f} CPU-s, {wall:.1f} s")
            found[f"edge_build_cpu_s_{name}"] = figure(round(cpu, 1), f"CPU s, {rows:,} points loaded and indexed")
            found[f"edge_build_wall_s_{name}"] = figure(round(wall, 1), "s, same")
            for kind, ids in kinds.items():
                got = measure_kind(mirror, chosen, kind, ids, day, n)
                console.print(f"  {kind}: {got}")
                for key, value in got.items():
                    unit = "of the exact top k" if key == "recall" else f"ms a search, {n} queries"
                    found[f"edge_{kind}_{key}_{name}"] = figure(value, unit)
            mirror.close()
            shutil.rmtree(folder, ignore_errors=True)  # GBs at 1 M points
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--layouts", default="graph,tenant,exact,int8")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    console = Console(width=120, stderr=args.json)
    found = measure(args.rows, args.queries, args.layouts.split(","), console)
    if args.json:
        emit(found, " ".join(["python -m bench.edge_hnsw", *sys.argv[1:]]))
    table = Table(title=f"Qdrant Edge HNSW layouts, {args.rows:,} points")
    for column in ("figure", "value"):
        table.add_column(column)
    for name, f in found.items():
        table.add_row(name, str(f["value"]))
    console.print(table)


if __name__ == "__main__":
    main()
