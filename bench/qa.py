"""QA endpoint latency under load, on this machine, for the temporal and the hybrid strategy.

Loads N synthetic interactions (default 100,000: 2,000 entities, 90 days) into a fresh FalkorDB graph by UNWIND
batches of the shape the pipeline writes (BULK_INTERACTIONS: the properties and edges of writes.INTERACTIONS, the
three time axes included; tests/integration/test_bench_qa.py proves the two shapes equal), and, for hybrid, the same
interactions into the mirror by its bulk path (`--mirror-engine`: edge, the embedded default, a Qdrant Edge shard
indexed after the load; or qdrant-local, qdrant-client local mode in memory) with their payloads and seeded random
unit vectors instead of embeddings (the load would otherwise measure the embedder; the query text is embedded by the
real embedder).
Serves `/v1/ask` (offline extractive answerer) with uvicorn in one process and drives it from another with C
concurrent clients (default 50) for S seconds (default 60) per strategy. Then the same load against a brute-force
baseline in the same run: the same API, but temporal retrieval that scans every interaction (a Cypher label scan on
the properties, no adjacency, no index) and the same mirror and embedder (until issue 30 the scan's API had no
mirror, so it ranked and answered lexically and embedded nothing: `--lexical-scan` runs that baseline). Prints
p50/p95/p99 latency, requests/s and errors, load times and the peak RSS of FalkorDB and of the API.
Goal: p95 < 150 ms, 0 errors.

Per strategy it also measures one client alone (p50/p95, `--single-seconds`) and the API's CPU per answer (from
/proc: the process's user + system time over the answers of a run, alone and under load); and before serving, the
API process profiles `--profile N` answers per strategy in process (bench/qa_profile.py): ms per answer by phase
(parse, resolve, read_graph, read_mirror, embed, rank, answer, serialise, other), texts embedded per answer and the
top functions under cProfile.
Run: `make bench` or `.venv/bin/python -m bench.qa [--rows N] [--seconds S] [--strategies temporal,hybrid]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
import numpy as np
import numpy.typing as npt
import uvloop
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.synthetic import interaction_between
from core.ids import entity_id
from core.records import Entity, Interaction
from core.settings import Settings
from core.timeaxes import day_iso, end_of_day_ms
from graph.mirror.base import VectorMirror
from graph.store.writer import interaction_first_key
from newskg.services.manager import ServiceManager
from newskg.services.process import free_port, wait_until
from newskg.wiring import open_graph

ENTITIES, DAYS = 2000, 90
BATCH = 5000  # rows per UNWIND statement and per mirror upsert
DIM = 384  # the shipped MiniLM's dimension: the query vectors the API embeds must match the loaded ones
STRATEGIES = ("temporal", "hybrid")
# The pipeline's interaction write (graph/store/writes.py INTERACTIONS, OBJECT edge included) for rows that are new:
# the same properties and edges, in one CREATE per row instead of MERGE + FOREACH + OPTIONAL MATCH (a fresh
# graph of unique ids; the unique constraint on Interaction.id still guards it).
BULK_INTERACTIONS = """
UNWIND $rows AS i
MATCH (s:Entity {id: i.subject_id})
MATCH (o:Entity {id: i.object_id})
CREATE (s)-[:SUBJECT_OF]->(x:Interaction {id: i.id, text: i.text, event_day: i.event_day, event_iso: i.event_iso,
  variant: i.variant, subject_id: i.subject_id, object_id: i.object_id, published_day: i.published_day,
  published_iso: i.published_iso, ingested_ms: i.ingested_ms, ingested_at: i.ingested_at, first_key: i.first_key})
CREATE (x)-[:OBJECT]->(o)
"""
SCAN = """
MATCH (x:Interaction)
WHERE (x.subject_id = $entity OR x.object_id = $entity) AND x.event_day >= $from_day AND x.event_day <= $to_day
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN x.id AS id, x.text AS text, x.event_day AS event_day, x.event_iso AS event_iso,
       x.published_day AS published_day, x.ingested_at AS ingested_at, x.ingested_ms AS ingested_ms,
       x.variant AS variant, x.confidence AS confidence,
       x.subject_id AS subject_id, x.object_id AS object_id, [] AS sources, 0 AS n_sources, [] AS urls
ORDER BY event_day, id LIMIT $limit
"""


def entities() -> list[Entity]:
    return [Entity(id=entity_id(f"Entity {k}", "PERSON"), name=f"Entity {k}", type="PERSON") for k in range(ENTITIES)]


def interactions(rows: int) -> Iterator[Interaction]:
    """The bench's facts, the same for every run of a size: two entities, a day of the first quarter of 2023."""
    rng = random.Random(11)
    people = entities()
    for i in range(rows):
        s, o = rng.sample(people, 2)
        day = int(f"2023{(1 + (i % DAYS) // 30):02d}{(1 + (i % DAYS) % 28):02d}")
        yield interaction_between(s, o, f"{s.name} met {o.name} about matter {i}", day)


def bulk_row(i: Interaction) -> dict[str, Any]:
    """The row BULK_INTERACTIONS writes: what the store's write path stores of an interaction."""
    return {
        "id": i.id,
        "text": i.text,
        "event_day": i.event_day,
        "event_iso": day_iso(i.event_day),
        "variant": i.variant,
        "subject_id": i.subject_id,
        "object_id": i.object_id,
        "published_day": i.published_day,
        "published_iso": day_iso(i.published_day),
        "ingested_ms": i.ingested_ms,
        "ingested_at": i.ingested_at,
        "first_key": interaction_first_key(i),
    }


def batches(rows: int) -> Iterator[list[Interaction]]:
    batch: list[Interaction] = []
    for i in interactions(rows):
        batch.append(i)
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
    )


def load_graph(settings: Settings, rows: int, console: Console) -> tuple[list[str], float]:
    """A fresh graph with the schema of `newskg graph init`, the entities by the store, the interactions by
    BULK_INTERACTIONS batches. Returns the entity names and the seconds the interactions took."""
    from graph.store.store import GraphStore

    people = entities()
    store = GraphStore(open_graph(settings))
    store.conn.drop()
    store.init()
    store.write_batch(entities=people)
    start = time.perf_counter()
    with progress(console) as bar:
        task = bar.add_task("graph: interactions", total=rows, rate="")
        for batch in batches(rows):
            store.conn.run(BULK_INTERACTIONS, {"rows": [bulk_row(i) for i in batch]})
            done = bar.tasks[task].completed + len(batch)
            bar.update(task, completed=done, rate=f"{done / (time.perf_counter() - start):,.0f} rows/s")
    return [e.name for e in people], time.perf_counter() - start


def unit_vectors(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def load_mirror(mirror: VectorMirror, rows: int, console: Console) -> float:
    """The interactions into the mirror by its bulk path with the payload the pipeline writes and seeded random
    unit vectors (not embeddings: see the module text), then its deferred index built. Returns the seconds both
    took."""
    from graph.mirror.base import INTERACTIONS, interaction_payload

    rng = np.random.default_rng(7)
    start = time.perf_counter()
    with progress(console) as bar:
        task = bar.add_task("mirror: points", total=rows, rate="")
        for batch in batches(rows):
            vectors = unit_vectors(rng, len(batch))
            items = [
                (interaction_payload(i) | {"mirrored_ms": 0}, v.tolist()) for i, v in zip(batch, vectors, strict=True)
            ]
            mirror.upsert_vectors(INTERACTIONS, items)
            done = bar.tasks[task].completed + len(batch)
            bar.update(task, completed=done, rate=f"{done / (time.perf_counter() - start):,.0f} points/s")
    mirror.optimize()  # Edge builds HNSW here, as after any bulk load; a no-op for local mode
    return time.perf_counter() - start


def bench_mirror(settings: Settings, rows: int, report: Path) -> VectorMirror:
    """The API's mirror, loaded here (the embedded engines admit one process), with the real embedder for the
    queries: a Qdrant Edge shard in a folder of this API process's own, or qdrant-client local mode in memory (its
    on-disk form commits every point to SQLite one by one: ~45 points/s on this shared disk). The load's seconds
    go to `report`."""
    from qdrant_client import QdrantClient

    from graph.mirror.qdrant import QdrantClientMirror
    from newskg.wiring import new_mirror, open_embedder

    embedder = open_embedder(settings)
    if settings.mirror_engine == "qdrant-local":
        mirror: VectorMirror = QdrantClientMirror(QdrantClient(location=":memory:"), embedder)
    else:
        mirror = new_mirror(settings.model_copy(update={"qdrant_path": report.with_suffix(".mirror")}), embedder)
    mirror.ensure()
    report.write_text(str(load_mirror(mirror, rows, Console(stderr=True))))
    mirror.embedder.embed(["warm the model before the first query"])
    return mirror


def serve(
    settings: Settings,
    port: int,
    brute_force: bool,
    mirror_rows: int,
    report: Path,
    profile_n: int = 0,
    strategies: tuple[str, ...] = (),
    names: tuple[str, ...] = (),
) -> None:
    import logging

    import uvicorn

    from graph.store.asof import AsOf
    from graph.store.rows import TimelineRow, rows_of
    from graph.store.store import GraphStore
    from qa.api import create_app
    from qa.service import QAService

    logging.disable(logging.WARNING)
    store = GraphStore(open_graph(settings))
    mirror = bench_mirror(settings, mirror_rows, report) if mirror_rows else None
    if brute_force:
        # The retriever's every argument is accepted (a missing one made every baseline request a 500): the scan
        # reads every interaction whatever the path (via_chunks) or the focus.
        def scan(entity_id, from_day, to_day, as_of=None, limit=1000, focus_day=None, variant=None, via_chunks=False):
            as_of_day = AsOf.of(as_of).day
            return rows_of(  # typed rows, as GraphStore.timeline returns them (the retriever reads their fields)
                TimelineRow,
                store.conn.read(
                    SCAN,
                    {
                        "entity": entity_id,
                        "from_day": from_day,
                        "to_day": to_day,
                        "as_of_day": as_of_day,
                        "as_of_ms": end_of_day_ms(as_of_day),
                        "limit": limit,
                    },
                ),
            )

        store.timeline = scan
    service = QAService(store, mirror)
    if profile_n:
        from bench.qa_profile import profile

        profiles = {s: profile(service, list(names), s, profile_n) for s in strategies}
        report.with_suffix(".profile.json").write_text(json.dumps(profiles))
    app = create_app(service, {"graph": store.conn.ping}, [], threads=settings.api_threads)
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


class LeanClient:
    """One keep-alive HTTP/1.1 connection with the least client work: on a 2-core machine httpx's own parsing
    cost more CPU than the server's answer (a profile showed the driver at 87% of a core, the server at 33%),
    so the figures measured the load generator. Latency is still send-to-last-byte of each response."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader = self.writer = None

    async def get(self, path: str, params: dict) -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(f"GET {path}?{urlencode(params)} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode())
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = next(
            int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        body = await self.reader.readexactly(length)
        if status == 200:
            json.loads(body)  # a complete, well-formed answer, or it counts as an error
        return status

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def drive(
    base: str, names: list[str], clients: int, seconds: float, strategy: str
) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds
    rng = random.Random(5)
    url = urlsplit(base)

    async def client() -> None:
        nonlocal errors
        http = LeanClient(url.hostname or "127.0.0.1", url.port or 80)
        while time.monotonic() < deadline:
            day = f"2023-{rng.randint(1, 3):02d}-{rng.randint(1, 28):02d}"
            start = time.perf_counter()
            try:
                status = await http.get("/v1/ask", {"q": rng.choice(names), "date": day, "strategy": strategy, "k": 10})
            except (OSError, asyncio.IncompleteReadError, ValueError, StopIteration):
                errors += 1
                http.close()
                http = LeanClient(url.hostname or "127.0.0.1", url.port or 80)
                continue
            errors += status != 200
            latencies.append((time.perf_counter() - start) * 1000)
        http.close()

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, errors, time.monotonic() - started


def summary(latencies: list[float], errors: int, elapsed: float) -> dict[str, float]:
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 2 else [float("nan")] * 99
    return {
        "p50": cuts[49],
        "p95": cuts[94],
        "p99": cuts[98],
        "rps": len(latencies) / elapsed,
        "errors": errors,
        "requests": len(latencies),
    }


def cpu_seconds(pid: int | None) -> float:
    """A process's CPU time so far (user + system, all its threads), from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    """One API process's figures: each strategy under load and with one client alone (summary() plus `cpu_ms`,
    the API's CPU per answer), its peak RSS, the mirror's load seconds and the in-process profile."""

    loaded: dict[str, dict[str, float]]
    single: dict[str, dict[str, float]]
    api_mb: float
    mirror_load_s: float | None
    profile: dict[str, Any]


def measure(
    settings: Settings,
    names: list[str],
    clients: int,
    seconds: float,
    strategies: tuple[str, ...],
    brute_force: bool,
    mirror_rows: int,
    console: Console,
    single_seconds: float = 0,
    profile_n: int = 0,
) -> Measured:
    """Each strategy's figures against one API process (warmed first by a few serial queries): with one client
    alone for `single_seconds` (when > 0), then with `clients`; the API's CPU per answer in each; and the peak
    RSS of the API (MB, VmHWM) when the process is stopped."""
    port = free_port()
    report = settings.data_dir / f"mirror-load-{port}.txt"
    server = mp.get_context("spawn").Process(
        target=serve,
        args=(settings, port, brute_force, mirror_rows, report, profile_n, strategies, tuple(names)),
        daemon=True,
    )
    started = time.perf_counter()
    server.start()
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: _up(base), 1800, 0.5)
    console.print(f"API up in {time.perf_counter() - started:.1f} s ({'scan' if brute_force else 'graph'})")
    results: dict[str, dict[str, float]] = {}
    single: dict[str, dict[str, float]] = {}

    def run(strategy: str, n: int, s: float) -> dict[str, float]:
        cpu = cpu_seconds(server.pid)
        figures = summary(*uvloop.run(drive(base, names, n, s, strategy)))
        figures["cpu_ms"] = (cpu_seconds(server.pid) - cpu) * 1000 / max(figures["requests"] + figures["errors"], 1)
        return figures

    for strategy in strategies:
        for name in names[:5]:  # first-query costs (model, caches) are issue 20's other bullet, not this figure
            httpx.get(base + "/v1/ask", params={"q": name, "date": "2023-02-01", "strategy": strategy}, timeout=600)
        if single_seconds > 0:
            single[strategy] = run(strategy, 1, single_seconds)
            console.print(
                f"{strategy}, one client: p95 {single[strategy]['p95']:.1f} ms, "
                f"API CPU {single[strategy]['cpu_ms']:.1f} ms/answer"
            )
        results[strategy] = run(strategy, clients, seconds)
        console.print(
            f"{strategy}: p95 {results[strategy]['p95']:.1f} ms, API CPU {results[strategy]['cpu_ms']:.1f} ms/answer, "
            f"{results[strategy]['errors']} errors"
        )
    api_mb = peak_rss_mb(server.pid)
    server.terminate()
    server.join(10)
    profiled = report.with_suffix(".profile.json")
    return Measured(
        results,
        single,
        api_mb,
        float(report.read_text()) if report.exists() else None,
        json.loads(profiled.read_text()) if profiled.exists() else {},
    )


def peak_rss_mb(pid: int | None) -> float:
    """The peak resident set of one process (VmHWM, MB); 0 when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0.0)


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


@dataclass
class Run:
    rows: int
    clients: int
    graph_load_s: float
    mirror_load_s: float | None
    graph: dict[str, dict[str, float]]
    scan: dict[str, float]
    api_rss_mb: float
    falkordb_rss_mb: float
    single: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    profile: dict[str, Any] = field(default_factory=dict[str, Any])
    lexical_scan: bool = False
    mirror_engine: str = "edge"


def figures(run: Run) -> dict[str, Figure]:
    """Each strategy's figures, the brute-force scan's as the temporal baseline of the same run. At 1 M
    interactions the names carry issue 20's suffix (qa_p95_ms_1m = the worse strategy's p95)."""
    shape = f"{run.rows:,} interactions, {run.clients} clients"
    suffix = "_1m" if run.rows >= 1_000_000 else ""
    scan = run.scan
    found: dict[str, Figure] = {}
    worst = max(run.graph, key=lambda s: run.graph[s]["p95"])
    found[f"qa_p95_ms{suffix}"] = figure(
        round(run.graph[worst]["p95"], 1),
        f"ms ({shape}; worse strategy: {worst}; baseline: scan)",
        round(scan["p95"], 1),
    )
    for strategy, r in run.graph.items():
        baseline = scan if strategy == "temporal" else None
        note = "; baseline: scan" if baseline else ""
        found[f"qa_p95_ms{suffix}_{strategy}"] = figure(
            round(r["p95"], 1), f"ms ({shape}{note})", round(scan["p95"], 1) if baseline else None
        )
        found[f"qa_p50_ms_{strategy}"] = figure(round(r["p50"], 1), "ms", round(scan["p50"], 1) if baseline else None)
        found[f"qa_p99_ms_{strategy}"] = figure(round(r["p99"], 1), "ms", round(scan["p99"], 1) if baseline else None)
        found[f"qa_requests_per_s_{strategy}"] = figure(
            round(r["rps"], 1), f"requests/s{note}", round(scan["rps"], 1) if baseline else None
        )
    temporal = run.graph.get("temporal", run.graph[worst])
    found["qa_p50_ms"] = figure(round(temporal["p50"], 1), "ms, temporal (baseline: scan)", round(scan["p50"], 1))
    found["qa_p99_ms"] = figure(round(temporal["p99"], 1), "ms, temporal (baseline: scan)", round(scan["p99"], 1))
    found["qa_requests_per_s"] = figure(
        round(temporal["rps"], 1), "requests/s, temporal (baseline: scan)", round(scan["rps"], 1)
    )
    errors = sum(int(r["errors"]) for r in run.graph.values())
    answered = sum(int(r["requests"]) for r in run.graph.values())
    found[f"qa_errors{suffix}"] = figure(errors, f"failed or non-200, all strategies (with {answered} answered)")
    found["qa_scan_errors"] = figure(
        scan["errors"], f"failed or non-200, scan baseline (with {scan['requests']} answered)"
    )
    found["qa_graph_load_s"] = figure(round(run.graph_load_s, 1), f"s, {run.rows:,} interactions by UNWIND batches")
    if run.mirror_load_s is not None:
        found["qa_mirror_load_s"] = figure(
            round(run.mirror_load_s, 1),
            f"s, {run.rows:,} points upserted and indexed ({run.mirror_engine}, bulk path, seeded vectors)",
        )
    rows = run.rows
    found["qa_api_peak_rss_mb"] = sized(figure(round(run.api_rss_mb), f"MB, the API process (VmHWM), {shape}"), rows)
    scan_note = "lexical scan: no mirror, no embedding" if run.lexical_scan else "scan: the same mirror and embedder"
    per_answer = "ms of API CPU (/proc user+system) per answer"
    for strategy, r in run.graph.items():
        baseline = scan if strategy == "temporal" else None
        note = f"; baseline: {scan_note}" if baseline else ""
        found[f"qa_cpu_ms_per_answer_loaded_{strategy}"] = sized(
            figure(
                round(r["cpu_ms"], 2), f"{per_answer}, {shape}{note}", round(scan["cpu_ms"], 2) if baseline else None
            ),
            rows,
        )
    for strategy, r in run.single.items():
        one = f"one client, {rows:,} interactions"
        found[f"qa_cpu_ms_per_answer_{strategy}"] = sized(figure(round(r["cpu_ms"], 2), f"{per_answer}, {one}"), rows)
        found[f"qa_p95_ms_single_client_{strategy}"] = sized(figure(round(r["p95"], 1), f"ms, {one}"), rows)
        found[f"qa_p50_ms_single_client_{strategy}"] = sized(figure(round(r["p50"], 1), f"ms, {one}"), rows)
    for strategy, profiled in run.profile.items():
        for phase, ms in profiled["phases"].items():
            found[f"qa_profile_{strategy}_{phase}_cpu_ms"] = sized(
                figure(
                    ms["cpu_ms"], f"ms of CPU per answer in process (wall {ms['wall_ms']} ms), {rows:,} interactions"
                ),
                rows,
            )
        if paths := profiled.get("answer_paths"):
            found[f"qa_profile_{strategy}_answer_cpu_ms_reusing_similarities"] = sized(
                figure(
                    paths["reuse_cpu_ms"],
                    f"ms of CPU per extractive answer, the same {paths['answers']} evidence lists; baseline: "
                    "embedding every evidence sentence per request (before issue 30), same run",
                    paths["embed_per_request_cpu_ms"],
                ),
                rows,
            )
        embedded = profiled["embedded_texts_per_answer"]
        found[f"qa_profile_{strategy}_embedded_texts_per_answer"] = sized(
            figure(
                round(sum(embedded.values()), 2),
                "texts embedded per answer, by the phase asking: "
                + (", ".join(f"{k} {v}" for k, v in embedded.items()) or "none"),
            ),
            rows,
        )
    return found


def sized(found: Figure, rows: int) -> Figure:
    """A figure with the row count it was measured at (issue 30's names carry it as a field, not only in the unit)."""
    return found | {"rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--scan-seconds", type=float, default=None, help="for the baseline (default: --seconds)")
    parser.add_argument("--scan-clients", type=int, default=None, help="for the baseline (default: --clients)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated: temporal,hybrid")
    parser.add_argument("--threads", type=int, default=None, help="the API's request threads (NEWSKG_API_THREADS)")
    parser.add_argument(
        "--embed-threads", type=int, default=None, help="the API's ONNX Runtime threads (NEWSKG_EMBED_THREADS)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    parser.add_argument(
        "--single-seconds", type=float, default=10, help="one client alone per strategy, before the load (0: skip)"
    )
    parser.add_argument("--profile", type=int, default=200, help="answers per strategy profiled in process (0: skip)")
    parser.add_argument(
        "--lexical-scan", action="store_true", help="the scan baseline without the mirror (lexical, no embedding)"
    )
    parser.add_argument(
        "--mirror-engine", choices=("edge", "qdrant-local"), default="edge", help="the embedded mirror measured"
    )
    args = parser.parse_args()
    strategies = tuple(s for s in args.strategies.split(",") if s)
    console = Console(width=120, stderr=args.json)
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="bench-qa-")),
        graph_database="bench_qa",
        mirror_engine=args.mirror_engine,
        _env_file=None,
    )
    if args.threads:
        settings = settings.model_copy(update={"api_threads": args.threads})
    if args.embed_threads:
        settings = settings.model_copy(update={"embed_threads": args.embed_threads})
    mirror_rows = args.rows if "hybrid" in strategies else 0
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    try:
        graph_service = manager.state.load()["graph"]
        settings = settings.model_copy(update={"graph_uri": graph_service.address})
        names, graph_load_s = load_graph(settings, args.rows, console)
        console.print(f"graph: {args.rows:,} interactions in {graph_load_s:.1f} s ({args.rows / graph_load_s:,.0f}/s)")
        graph = measure(
            settings,
            names,
            args.clients,
            args.seconds,
            strategies,
            False,
            mirror_rows,
            console,
            args.single_seconds,
            args.profile,
        )
        if graph.mirror_load_s is not None:
            console.print(
                f"mirror: {args.rows:,} points in {graph.mirror_load_s:.1f} s "
                f"({args.rows / graph.mirror_load_s:,.0f}/s)"
            )
        scan = measure(
            settings,
            names,
            args.scan_clients or args.clients,
            args.scan_seconds or args.seconds,
            ("temporal",),
            True,
            0 if args.lexical_scan else mirror_rows,
            console,
        )
        falkordb_mb = peak_rss_mb(graph_service.pid)
    finally:
        manager.down()
    run = Run(
        args.rows,
        args.clients,
        graph_load_s,
        graph.mirror_load_s,
        graph.loaded,
        scan.loaded["temporal"],
        graph.api_mb,
        falkordb_mb,
        graph.single,
        graph.profile,
        args.lexical_scan or not mirror_rows,
        args.mirror_engine,
    )
    if args.json:
        emit(figures(run), " ".join(["python -m bench.qa", *sys.argv[1:]]))
    report(run, args.seconds, console)


def report(run: Run, seconds: float, console: Console) -> None:
    table = Table(title=f"/v1/ask (extractive), {run.rows:,} interactions, {run.clients} clients, {seconds:.0f} s each")
    for column in ("retrieval", "p50 ms", "p95 ms", "p99 ms", "requests/s", "API CPU ms/answer", "errors"):
        table.add_column(column, justify="right")
    scan_name = "temporal, brute-force scan" + (" (lexical, no mirror)" if run.lexical_scan else "")
    rows = [(f"{s} (graph + indexes)", r) for s, r in run.graph.items()]
    rows += [(f"{s}, one client", r) for s, r in run.single.items()] + [(scan_name, run.scan)]
    for name, r in rows:
        table.add_row(
            name,
            f"{r['p50']:.1f}",
            f"{r['p95']:.1f}",
            f"{r['p99']:.1f}",
            f"{r['rps']:.1f}",
            f"{r['cpu_ms']:.1f}",
            str(int(r["errors"])),
        )
    console.print(table)
    if run.profile:
        console.print(profile_table(run))
    worst = max(r["p95"] for r in run.graph.values())
    mirror = f", mirror {run.mirror_load_s:.1f} s" if run.mirror_load_s is not None else ""
    console.print(
        f"p95 goal < 150 ms: {'met' if worst < 150 else 'missed'} (worse strategy {worst:.1f} ms); "
        f"load: graph {run.graph_load_s:.1f} s{mirror}; peak RSS: API {run.api_rss_mb:,.0f} MB, "
        f"FalkorDB {run.falkordb_rss_mb:,.0f} MB; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


def profile_table(run: Run) -> Table:
    """ms per answer by phase (CPU, with wall in brackets), per strategy, from the in-process profile; then the
    texts embedded per answer and each strategy's top functions under cProfile."""
    from bench.qa_profile import PHASES

    strategies = list(run.profile)
    answers = run.profile[strategies[0]]["answers"]
    table = Table(title=f"one answer by phase, in process ({answers} answers each): CPU ms (wall ms)")
    table.add_column("phase")
    for strategy in strategies:
        table.add_column(strategy, justify="right")
    for phase in (*PHASES, "total"):
        cells = []
        for strategy in strategies:
            profiled = run.profile[strategy]
            ms = profiled["phases"][phase] if phase != "total" else profiled
            cells.append(f"{ms['cpu_ms']:.2f} ({ms['wall_ms']:.2f})")
        table.add_row(phase, *cells)
    table.add_row(
        "texts embedded",
        *(
            ", ".join(f"{k} {v}" for k, v in run.profile[s]["embedded_texts_per_answer"].items()) or "none"
            for s in strategies
        ),
    )
    if any(run.profile[s].get("answer_paths") for s in strategies):
        table.add_row(
            "answer: reuse / embed per request",
            *(
                f"{p['reuse_cpu_ms']:.2f} / {p['embed_per_request_cpu_ms']:.2f}"
                if (p := run.profile[s].get("answer_paths"))
                else "-"
                for s in strategies
            ),
        )
    for strategy in strategies:
        for n, top in enumerate(run.profile[strategy]["cprofile_top"][:8]):
            table.add_row(
                f"{strategy} top {n + 1}" if n else f"{strategy} cProfile own ms",
                *(f"{top['function'][-60:]} {top['own_ms']:.2f}" if s == strategy else "" for s in strategies),
            )
    return table


if __name__ == "__main__":
    main()
