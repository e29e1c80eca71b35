"""QA endpoint latency under load, on this machine.

Loads N synthetic interactions (default 100,000: 2,000 entities, 90 days) into a fresh FalkorDB graph, serves
`/v1/ask` (temporal strategy, offline extractive answerer) with uvicorn in one process and drives it from
another with C concurrent clients (default 50) for S seconds (default 60). Then the same load against a
brute-force baseline in the same run: the same API, but retrieval that scans every interaction (a Cypher label
scan on the properties, no adjacency, no index). Prints p50/p95/p99 latency, requests/s and errors for both.
Goal: p95 < 150 ms, 0 errors. Run: `make bench` or `.venv/bin/python -m bench.qa [--rows N] [--seconds S]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import httpx
import uvloop
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.synthetic import interaction_between
from core.ids import entity_id
from core.records import Entity
from core.settings import Settings
from core.timeaxes import end_of_day_ms
from newskg.services.manager import ServiceManager
from newskg.services.process import free_port, wait_until
from newskg.wiring import open_graph

ENTITIES, DAYS = 2000, 90
SCAN = """
MATCH (x:Interaction)
WHERE (x.subject_id = $entity OR x.object_id = $entity) AND x.event_day >= $from_day AND x.event_day <= $to_day
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN x.id AS id, x.text AS text, x.event_day AS event_day, x.event_iso AS event_iso,
       x.published_day AS published_day, x.ingested_at AS ingested_at, x.ingested_ms AS ingested_ms,
       x.variant AS variant,
       x.subject_id AS subject_id, x.object_id AS object_id, [] AS sources, 0 AS n_sources, [] AS urls
ORDER BY event_day, id LIMIT $limit
"""


def load(settings: Settings, rows: int) -> list[str]:
    from graph.store.store import GraphStore

    rng = random.Random(11)
    entities = [
        Entity(id=entity_id(f"Entity {k}", "PERSON"), name=f"Entity {k}", type="PERSON") for k in range(ENTITIES)
    ]
    store = GraphStore(open_graph(settings))
    store.conn.drop()
    store.init()
    store.write_batch(entities=entities)
    batch = []
    for i in range(rows):
        s, o = rng.sample(entities, 2)
        day = int(f"2023{(1 + (i % DAYS) // 30):02d}{(1 + (i % DAYS) % 28):02d}")
        text = f"{s.name} met {o.name} about matter {i}"
        batch.append(interaction_between(s, o, text, day))
        if len(batch) == 2000:
            store.write_batch(interactions=batch)
            batch = []
    store.write_batch(interactions=batch)
    return [e.name for e in entities]


def serve(settings: Settings, port: int, brute_force: bool) -> None:
    import logging

    import uvicorn

    from graph.store.asof import AsOf
    from graph.store.rows import TimelineRow, rows_of
    from graph.store.store import GraphStore
    from qa.api import create_app
    from qa.service import QAService

    logging.disable(logging.WARNING)
    store = GraphStore(open_graph(settings))
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
    app = create_app(QAService(store, None), {"graph": store.conn.ping}, [])
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


async def drive(base: str, names: list[str], clients: int, seconds: float) -> tuple[list[float], int, float]:
    latencies: list[float] = []
    errors = 0
    deadline = time.monotonic() + seconds
    rng = random.Random(5)
    url = urlsplit(base)

    async def client() -> None:
        nonlocal errors
        http = LeanClient(url.hostname, url.port)
        while time.monotonic() < deadline:
            day = f"2023-{rng.randint(1, 3):02d}-{rng.randint(1, 28):02d}"
            start = time.perf_counter()
            try:
                status = await http.get(
                    "/v1/ask", {"q": rng.choice(names), "date": day, "strategy": "temporal", "k": 10}
                )
            except (OSError, asyncio.IncompleteReadError, ValueError, StopIteration):
                errors += 1
                http.close()
                http = LeanClient(url.hostname, url.port)
                continue
            errors += status != 200
            latencies.append((time.perf_counter() - start) * 1000)
        http.close()

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    return latencies, errors, time.monotonic() - started


def measure(settings: Settings, names: list[str], clients: int, seconds: float, brute_force: bool) -> dict:
    port = free_port()
    server = mp.get_context("spawn").Process(target=serve, args=(settings, port, brute_force), daemon=True)
    server.start()
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: _up(base), 120, 0.5)
    latencies, errors, elapsed = uvloop.run(drive(base, names, clients, seconds))
    server.terminate()
    server.join(10)
    cuts = statistics.quantiles(latencies, n=100) if len(latencies) > 2 else [float("nan")] * 99
    return {
        "p50": cuts[49],
        "p95": cuts[94],
        "p99": cuts[98],
        "rps": len(latencies) / elapsed,
        "errors": errors,
        "requests": len(latencies),
    }


def _up(base: str) -> bool:
    try:
        return httpx.get(base + "/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def figures(indexed: dict, scan: dict, rows: int, clients: int) -> dict[str, Figure]:
    """The graph retrieval's figures, the brute-force scan's as the baseline of the same run. At 1 M interactions the
    p95 carries issue 20's name (qa_p95_ms_1m)."""
    shape = f"{rows:,} interactions, {clients} clients"
    p95_name = "qa_p95_ms_1m" if rows >= 1_000_000 else "qa_p95_ms"
    return {
        p95_name: figure(round(indexed["p95"], 1), f"ms ({shape}; baseline: scan)", round(scan["p95"], 1)),
        "qa_p50_ms": figure(round(indexed["p50"], 1), "ms (baseline: scan)", round(scan["p50"], 1)),
        "qa_p99_ms": figure(round(indexed["p99"], 1), "ms (baseline: scan)", round(scan["p99"], 1)),
        "qa_requests_per_s": figure(round(indexed["rps"], 1), "requests/s (baseline: scan)", round(scan["rps"], 1)),
        "qa_errors": figure(indexed["errors"], f"failed or non-200 (with {indexed['requests']} answered)"),
        "qa_scan_errors": figure(
            scan["errors"], f"failed or non-200, scan baseline (with {scan['requests']} answered)"
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="bench-qa-")), graph_database="bench_qa", _env_file=None)
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    try:
        settings = settings.model_copy(update={"graph_uri": manager.state.load()["graph"].address})
        names = load(settings, args.rows)
        indexed = measure(settings, names, args.clients, args.seconds, brute_force=False)
        scan = measure(settings, names, args.clients, args.seconds, brute_force=True)
    finally:
        manager.down()
    if args.json:
        emit(figures(indexed, scan, args.rows, args.clients), " ".join(["python -m bench.qa", *sys.argv[1:]]))
    table = Table(
        title=f"/v1/ask (temporal, extractive), {args.rows:,} interactions, {args.clients} clients, "
        f"{args.seconds:.0f} s each"
    )
    for column in ("retrieval", "p50 ms", "p95 ms", "p99 ms", "requests/s", "errors"):
        table.add_column(column, justify="right")
    for name, r in (("graph (adjacency + indexes)", indexed), ("brute-force scan (baseline)", scan)):
        table.add_row(
            name, f"{r['p50']:.1f}", f"{r['p95']:.1f}", f"{r['p99']:.1f}", f"{r['rps']:.1f}", str(r["errors"])
        )
    console = Console(width=120, stderr=args.json)
    console.print(table)
    console.print(
        f"p95 goal < 150 ms: {'met' if indexed['p95'] < 150 else 'missed'}; "
        f"throughput vs scan: {indexed['rps'] / max(scan['rps'], 1e-9):.1f}x"
    )


if __name__ == "__main__":
    main()
