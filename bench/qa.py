"""QA endpoint latency under load, on this machine, for the temporal and the hybrid strategy, at one graph size or
at several in one run (`--sizes 10000,100000,1000000`, ascending).

Per size: a fresh FalkorDB graph of N synthetic interactions with proportional chunks, articles and entities of
Zipf popularity (bench/qa_graph.py: N / 5 chunks stating 5 facts each, N / 10 entities, 90 days; at 1 M the busiest
entity takes part in ~43,000 facts, the median in a handful), the chunks by the store's own statements and the
interactions by UNWIND batches of the shape the pipeline writes (BULK_INTERACTIONS: the properties and edges of
writes.INTERACTIONS, evidence included; tests/integration/test_bench_qa.py proves the two shapes equal); for
hybrid, the same facts and chunks into the mirror by its bulk path with their payloads and seeded random unit
vectors instead of embeddings (the load would otherwise measure the embedder; the query text is embedded by the
real embedder). The questions follow the news (qa_graph.asked_of): an entity a chunk states facts about, on the
chunk's day, so a hub is asked about as often as it is written about and every asked entity is known by its day.
`--mirror-engine edge` (the
embedded default) builds the Qdrant Edge shard in a short-lived process of its own, indexes it and closes it
(the shard admits one process at a time): the API then opens the built shard, as `newskg serve` does, so its peak
RSS holds no bulk load; `qdrant-local` (qdrant-client local mode, in memory) can only be loaded inside the API.

The API is built as `newskg serve` builds it (the product's cached embedder, the warm-up, /readyz waiting for it)
and served with uvicorn in a process of its own; `qa_ready_s` is the time from spawning it to the first 200 of
/readyz (polled every 50 ms). It is driven from this process per strategy: one client alone (p50/p95,
`--single-seconds`), C closed-loop clients (default 50) for S seconds (default 60: the capacity, answers/s), then an
open loop at half that capacity (requests sent on a fixed schedule, each on a pooled keep-alive connection, latency
from the scheduled send, so queueing counts); the API's CPU per answer from /proc (user + system over a run's
answers); the API's own time on each answer, read from its `Server-Timing` header, whose p95 at half load is
reported beside the client's (`qa_p95_ms_half_load_server_<strategy>`: the rest is the connection, the API's event
loop and this driver, on the same cores); the share of questions not asked before in the API process (the rest hit
the embedding cache); then the
explorer's search, neighbourhood and timeline, one client each for `--explore-seconds`. Then the same load against a
brute-force baseline in the same run (`--scan-clients`, `--scan-seconds`): the same API, but temporal retrieval that
scans every interaction (a Cypher label scan on the properties, no adjacency, no index) and the same mirror and
embedder (`--lexical-scan`: no mirror, so it ranks and answers lexically and embeds nothing, the baseline until
issue 30). Before the API starts, a process of its own profiles `--profile N` answers per strategy on the same
graph and mirror (bench/qa_profile.py): ms per answer by phase, each query's embedding cold, texts embedded per
answer and the top functions under cProfile.

Figures (`--json`): the largest size's under the names without a size; every size's again with the size as a suffix
(`_10k`, `_100k`, `_1m`); each carries `rows`. Growth: `qa_p95_growth_<strategy>`, the half-load p95 at the largest
size over the smallest; `qa_capacity_vs_scan`, temporal answers/s over the scan's, and two ceilings of it:
`qa_capacity_ceiling_vs_scan` (GET /healthz's rate over the scan's) and `qa_capacity_bound_vs_scan` (every core on
the API's and the driver's CPU per temporal answer, FalkorDB's CPU taken as free, over the scan's). Goal (issue 30):
p95 < 150 ms, 0 errors; flat from the smallest size to the largest.
Run: `make bench` or `.venv/bin/python -m bench.qa [--rows N | --sizes N,M,...] [--seconds S] [--strategies
temporal,hybrid]`.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import multiprocessing as mp
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, urlencode, urlsplit

import httpx
import numpy as np
import numpy.typing as npt
import uvloop
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure, process_cpu_s
from bench.qa_graph import Loaded, batches, load_graph, progress
from newskg.core.ids import entity_id
from newskg.core.settings import Settings
from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.mirror.base import VectorMirror
from newskg.services.manager import ServiceManager
from newskg.services.process import free_port, wait_until
from newskg.wiring import Wiring, api_settings

DIM = 384  # the shipped MiniLM's dimension: the query vectors the API embeds must match the loaded ones
STRATEGIES = ("temporal", "hybrid")
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


def unit_vectors(rng: np.random.Generator, n: int) -> npt.NDArray[np.float32]:
    vectors = rng.standard_normal((n, DIM), dtype=np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def load_mirror(mirror: VectorMirror, rows: int, console: Console) -> float:
    """The interactions and chunks into the mirror by its bulk path with the payloads the pipeline writes and seeded
    random unit vectors (not embeddings: see the module text), then its deferred index built. Returns the seconds
    both took."""
    from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, chunk_payload, interaction_payload

    rng = np.random.default_rng(7)
    start = time.perf_counter()
    with progress(console) as bar:
        task = bar.add_task("mirror: facts (and their chunks)", total=rows, rate="")
        with mirror.bulk():  # Edge builds HNSW once, when the load ends; a no-op for local mode
            for batch in batches(rows):
                vectors = unit_vectors(rng, len(batch.facts) + len(batch.chunks)).tolist()
                facts = [(interaction_payload(i), vectors.pop()) for i in batch.facts]
                chunks = [(chunk_payload(c, batch.mentions[c.id]), vectors.pop()) for c in batch.chunks]
                mirror.upsert_vectors(INTERACTIONS, [(p | {"mirrored_ms": 0}, v) for p, v in facts])
                mirror.upsert_vectors(CHUNKS, [(p | {"mirrored_ms": 0}, v) for p, v in chunks])
                done = bar.tasks[task].completed + len(batch.facts)
                bar.update(task, completed=done, rate=f"{done / (time.perf_counter() - start):,.0f} facts/s")
    return time.perf_counter() - start


MirrorMode = Literal["none", "open", "load"]
# One request of a driver: its path, its query parameters and the question it asks (for the distinct share).
Request = tuple[str, dict[str, Any], str]
MakeRequest = Callable[[random.Random], Request]


def build_mirror(settings: Settings, rows: int, report: Path) -> None:
    """The Qdrant Edge shard of `rows` points, built, indexed and closed in a process of its own (run by
    `in_process`): the shard admits one process at a time, and the API then opens it as `newskg serve` opens an
    existing shard, so the API's peak RSS and readiness hold no bulk load. The seconds go to `report`."""
    from newskg.wiring import new_mirror, open_cached_embedder

    mirror = new_mirror(settings, open_cached_embedder(settings))
    try:
        mirror.ensure()
        report.write_text(str(load_mirror(mirror, rows, Console(stderr=True))))
    finally:
        mirror.close()


def bench_mirror(settings: Settings, rows: int, report: Path) -> VectorMirror:
    """qdrant-client local mode in memory, loaded inside the process that uses it (an in-memory mirror cannot be
    handed over; its on-disk form commits every point to SQLite one by one: ~45 points/s on this shared disk), with
    the product's cached embedder for the queries. The load's seconds go to `report`."""
    from qdrant_client import QdrantClient

    from newskg.graph.mirror.qdrant import QdrantClientMirror
    from newskg.wiring import open_cached_embedder

    mirror = QdrantClientMirror(QdrantClient(location=":memory:"), open_cached_embedder(settings))
    mirror.ensure()
    report.write_text(str(load_mirror(mirror, rows, Console(stderr=True))))
    return mirror


def in_process(target: Callable[..., None], *args: Any) -> None:
    """Run `target(*args)` to its end in a spawned process: what it opens (the embedded shard) is closed before the
    next process opens it."""
    process = mp.get_context("spawn").Process(target=target, args=args)
    process.start()
    process.join()
    if process.exitcode != 0:
        raise RuntimeError(f"{target.__name__} exited with {process.exitcode}")


@dataclass(frozen=True)
class ApiSpec:
    """How an API process builds its QA service (picklable: a spawned process receives it). `mirror`: none, open
    (the Edge shard `build_mirror` built, opened as `newskg serve` opens it) or load (qdrant-local, loaded in
    the process: `rows` points, the seconds to `report`). `brute_force`: the scan baseline's timeline."""

    settings: Settings
    mirror: MirrorMode
    rows: int
    report: Path
    brute_force: bool = False
    graph_pid: int | None = None  # FalkorDB's server, whose CPU per answer each run reports beside the API's


def scan_timeline(store: Any) -> Callable[..., Any]:
    """The baseline's timeline: a label scan of every interaction. The retriever's every argument is accepted (a
    missing one made every baseline request a 500): the scan reads every interaction whatever the path (via_chunks),
    the variant or the focus."""
    from newskg.graph.store.asof import AsOf
    from newskg.graph.store.rows import TimelineRow, rows_of

    def scan(entity_id, from_day, to_day, as_of=None, limit=1000, **_focus_variant_via_chunks):
        as_of_day = AsOf.of(as_of).day
        params = {"entity": entity_id, "from_day": from_day, "to_day": to_day, "as_of_day": as_of_day}
        params |= {"as_of_ms": end_of_day_ms(as_of_day), "limit": limit}
        return rows_of(TimelineRow, store.conn.read(SCAN, params))  # typed rows, as GraphStore.timeline returns

    return scan


def api_service(spec: ApiSpec, wiring: Wiring) -> Any:
    """The QA service as `newskg serve` builds it (Wiring.qa_service: a store with its schema ensured, the mirror
    opened with the product's cached embedder), the extractive answerer, and the scan's timeline for the
    baseline."""
    from newskg.qa.service import QAService

    mirror: VectorMirror | None = None
    if spec.mirror == "open":
        mirror = wiring.mirror()
    elif spec.mirror == "load":
        mirror = wiring.own(bench_mirror(spec.settings, spec.rows, spec.report))
    store = wiring.store()
    if spec.brute_force:
        store.timeline = scan_timeline(store)
    return QAService(store, mirror, None, spec.settings.qa_backoff_days)


def serve(spec: ApiSpec, port: int) -> None:
    """The API process: the app as `newskg serve` makes it (the warm-up starts with it and /readyz answers 503
    until it has run; the graph and mirror checks), served by uvicorn until terminated."""
    import logging

    import uvicorn

    from newskg.pipeline import qa_checks
    from newskg.qa.api import create_app
    from newskg.qa.warmup import Warmup, service_steps

    logging.disable(logging.WARNING)
    settings = api_settings(spec.settings)
    with Wiring(settings) as wiring:
        service = api_service(spec, wiring)
        warmup = Warmup(service_steps(service))
        app = create_app(
            service, qa_checks(service), [], settings.api_max_query_chars, settings.api_threads, warmup=warmup
        )
        uvicorn.run(app, host="127.0.0.1", port=port, log_level="error", access_log=False)


def profile_api(
    spec: ApiSpec, asked: tuple[tuple[str, str], ...], strategies: tuple[str, ...], n: int, out: Path
) -> None:
    """The in-process profile (bench/qa_profile.py) of `n` answers per strategy, on the service the API builds, in a
    process of its own before the API starts (it would otherwise delay readiness and count in the API's RSS)."""
    import logging

    from bench.qa_profile import profile

    logging.disable(logging.WARNING)
    with Wiring(api_settings(spec.settings)) as wiring:
        service = api_service(spec, wiring)
        out.write_text(json.dumps({s: profile(service, list(asked), s, n) for s in strategies}))


# A response's status and the server's own ms on it (Server-Timing); (None, None): the connection failed.
Reply = tuple[int | None, float | None]


def _header(line: bytes) -> tuple[bytes, bytes]:
    name, value = line.split(b":", 1)
    return name.strip().lower(), value.strip()


def _server_ms(timing: bytes | None) -> float | None:
    """The `dur` of the API's `Server-Timing: app;dur=<ms>` (newskg/qa/api.py), None without one."""
    if not timing:
        return None
    durations = [part[4:] for part in timing.split(b";") if part.startswith(b"dur=")]
    return float(durations[0]) if durations else None


class LeanClient:
    """One keep-alive HTTP/1.1 connection with the least client work: on a 2-core machine httpx's own parsing
    cost more CPU than the server's answer (a profile showed the driver at 87% of a core, the server at 33%),
    so the figures measured the load generator. Latency is still send-to-last-byte of each response."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str, params: dict[str, Any]) -> Reply:
        """The status and the server's own ms on the request (its `Server-Timing: app;dur=`, None without one)."""
        request = f"GET {path}?{urlencode(params, doseq=True)} HTTP/1.1\r\nHost: {self.host}\r\n\r\n".encode()
        reused = self.reader is not None
        try:
            reader, head = await self._send(request)
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            # A kept-alive connection the server closed while it sat idle (uvicorn's keep-alive is 5 s; the open
            # loop's pool keeps connections its bursts opened) fails before any byte of an answer: send again on a
            # new one, as HTTP clients do for a GET. A fresh connection that fails is the server's error.
            if not reused or (isinstance(exc, asyncio.IncompleteReadError) and exc.partial):
                raise
            self.close()
            reader, head = await self._send(request)
        status = int(head.split(b" ", 2)[1])
        headers = dict(_header(line) for line in head.split(b"\r\n")[1:] if b":" in line)
        body = await reader.readexactly(int(headers[b"content-length"]))
        if status == 200:
            json.loads(body)  # a complete, well-formed answer, or it counts as an error
        return status, _server_ms(headers.get(b"server-timing"))

    async def _send(self, request: bytes) -> tuple[asyncio.StreamReader, bytes]:
        """The connection's reader and the response's head (status line and headers)."""
        if self.reader is None or self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        self.writer.write(request)
        return self.reader, await self.reader.readuntil(b"\r\n\r\n")

    async def status(self, path: str, params: dict[str, Any]) -> Reply:
        """The response's status and server ms, or (None, None) when the connection failed (closed here: the next
        call reconnects)."""
        try:
            return await self.get(path, params)
        except (OSError, asyncio.IncompleteReadError, ValueError, KeyError):
            self.close()
            return None, None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


@dataclass
class Tally:
    """A run's latencies (ms, answered requests), the server's own ms on each answer that said it (Server-Timing),
    its errors (failed or non-200) and the question of each request."""

    latencies: list[float] = field(default_factory=list[float])
    errors: int = 0
    asked: list[str] = field(default_factory=list[str])
    failed: Counter[str] = field(default_factory=Counter[str])  # the errors by status ("connection": none)
    server: list[float] = field(default_factory=list[float])

    def add(self, question: str, reply: Reply, start: float) -> None:
        status, server_ms = reply
        self.asked.append(question)
        if status != 200:
            self.errors += 1
            self.failed[str(status or "connection")] += 1
        if status is not None:
            self.latencies.append((time.perf_counter() - start) * 1000)
        if server_ms is not None:
            self.server.append(server_ms)


# Each driver run draws its own questions (seeds 5, 6, … in run order: the same sequence every bench run), so a
# run does not replay the one before it against the API's embedding cache; `qa_distinct_questions_share_*` says
# how many of a strategy's questions the process had not seen.
SEEDS = itertools.count(5)


def _client(base: str) -> LeanClient:
    url = urlsplit(base)
    return LeanClient(url.hostname or "127.0.0.1", url.port or 80)


async def closed_loop(base: str, make: MakeRequest, clients: int, seconds: float) -> tuple[Tally, float]:
    """`clients` clients, each sending its next request when its last is answered, for `seconds`: the capacity."""
    tally, rng = Tally(), random.Random(next(SEEDS))
    deadline = time.monotonic() + seconds

    async def client() -> None:
        http = _client(base)
        while time.monotonic() < deadline:
            path, params, question = make(rng)
            start = time.perf_counter()
            tally.add(question, await http.status(path, params), start)
        http.close()

    started = time.monotonic()
    await asyncio.gather(*(client() for _ in range(clients)))
    return tally, time.monotonic() - started


async def open_loop(base: str, make: MakeRequest, rate: float, seconds: float) -> tuple[Tally, float]:
    """Requests sent on a fixed schedule (`rate` a second for `seconds`) whatever the answers do, each on an idle
    keep-alive connection of a pool that grows when none is idle; latency from the scheduled send, so a request
    that waited (for the server or this loop) counts its wait."""
    tally, rng, idle = Tally(), random.Random(next(SEEDS)), list[LeanClient]()

    async def send(at: float, request: Request) -> None:
        path, params, question = request
        http = idle.pop() if idle else _client(base)
        reply = await http.status(path, params)
        tally.add(question, reply, at)
        idle.append(http)

    started = time.perf_counter()
    sent: list[asyncio.Task[None]] = []
    for k in range(max(1, round(rate * seconds))):
        at = started + k / rate
        await asyncio.sleep(max(0.0, at - time.perf_counter()))
        sent.append(asyncio.create_task(send(at, make(rng))))
    await asyncio.gather(*sent)
    for http in idle:
        http.close()
    return tally, time.perf_counter() - started


def asking(asked: list[tuple[str, str]], strategy: str) -> MakeRequest:
    """/v1/ask as the bench's clients ask it: one of the graph's questions (bench/qa_graph.py asked_of: an entity
    in the news, on a day it was)."""

    def make(rng: random.Random) -> Request:
        name, day = rng.choice(asked)
        return "/v1/ask", {"q": name, "date": day, "strategy": strategy, "k": 10}, name

    return make


def asking_nothing(rng: random.Random) -> Request:
    """The API's floor: a request that reads no graph and ranks nothing (/healthz) through the same server, gate
    and driver, so its rate is the most any answer path of this API process could reach on these cores."""
    return "/healthz", {}, ""


def exploring(asked: list[tuple[str, str]]) -> dict[str, MakeRequest]:
    """The explorer's reads as its page makes them, for the entities of the bench's questions as of their days (an
    entity's page is there as of a day once something names it; before, it is a 404, as for a user who asks for an
    entity not known yet): the search box (a name), an entity's neighbourhood (the page's default view: its whole
    history to the as-of day) and its mention timeline (the default 60 days)."""

    def path_of(name: str, view: str) -> str:
        return f"/v1/explore/entities/{quote(entity_id(name, 'PERSON'), safe='')}/{view}"

    def search(rng: random.Random) -> Request:
        name, day = rng.choice(asked)
        return "/v1/explore/search", {"q": name, "as_of": day}, name

    def neighbourhood(rng: random.Random) -> Request:
        name, day = rng.choice(asked)
        return path_of(name, "neighbourhood"), {"as_of": day}, name

    def timeline(rng: random.Random) -> Request:
        name, day = rng.choice(asked)
        return path_of(name, "timeline"), {"as_of": day}, name

    return {"search": search, "neighbourhood": neighbourhood, "timeline": timeline}


def percentiles(ms: list[float]) -> list[float]:
    """The 1st to 99th percentiles of `ms` (index p - 1), nan when there are too few to cut."""
    return statistics.quantiles(ms, n=100) if len(ms) > 2 else [float("nan")] * 99


def summary(latencies: list[float], errors: int, elapsed: float) -> dict[str, float]:
    cuts = percentiles(latencies)
    return {
        "p50": cuts[49],
        "p95": cuts[94],
        "p99": cuts[98],
        "rps": len(latencies) / elapsed,
        "errors": errors,
        "requests": len(latencies),
    }


def server_summary(server_ms: list[float]) -> dict[str, float]:
    """The server's own time on the answers (Server-Timing), p50 and p95: beside the client's figures, the share
    of a latency that was the server's, the rest being the connection and this driver (nan without the header)."""
    cuts = percentiles(server_ms)
    return {"server_p50": cuts[49], "server_p95": cuts[94]}


class Api:
    """One API process (`serve`), spawned and timed to readiness, then driven: each run's summary with the API's
    CPU per answer, and the questions not asked before in this process (the rest can hit its embedding cache)."""

    def __init__(self, spec: ApiSpec):
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process = mp.get_context("spawn").Process(target=serve, args=(spec, self.port), daemon=True)
        self.graph_pid = spec.graph_pid
        self.asked: set[str] = set()

    def start(self) -> float:
        """Spawn the API; the seconds to its first 200 from /readyz, polled every 50 ms."""
        started = time.perf_counter()
        self.process.start()
        if not wait_until(self._ready, 1800, 0.05):
            raise RuntimeError("the API was not ready within 30 minutes")
        return time.perf_counter() - started

    def _ready(self) -> bool:
        if not self.process.is_alive():
            raise RuntimeError(f"the API process exited with {self.process.exitcode} before it was ready")
        try:
            return httpx.get(self.base + "/readyz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def run(self, driver: Coroutine[Any, Any, tuple[Tally, float]], label: str) -> dict[str, float]:
        """A driver's run: summary() plus `cpu_ms` (the API's CPU per request), `graph_cpu_ms` and `driver_cpu_ms`
        (FalkorDB's and this process's, the load driver's), `fresh` (questions first asked in this process) and
        `asked` (requests sent); its errors by status printed under `label`."""
        pids = {"cpu_ms": self.process.pid, "graph_cpu_ms": self.graph_pid, "driver_cpu_ms": os.getpid()}
        before = {key: process_cpu_s(pid) for key, pid in pids.items()}
        tally, elapsed = uvloop.run(driver)
        figures = summary(tally.latencies, tally.errors, elapsed) | server_summary(tally.server)
        for key, pid in pids.items():
            start, end = before[key], process_cpu_s(pid)
            if start is not None and end is not None:  # a graph server not started here has no pid: no figure
                figures[key] = (end - start) * 1000 / max(len(tally.asked), 1)
        figures["fresh"] = len(set(tally.asked) - self.asked)
        figures["asked"] = len(tally.asked)
        self.asked |= set(tally.asked)
        if tally.failed:
            Console(stderr=True).print(f"[red]{label}: errors by status: {dict(tally.failed)}[/]")
        return figures

    def warm(self, asked: list[tuple[str, str]], strategy: str) -> None:
        """A few serial questions not counted: first-query costs are issue 20's other bullet, not these figures."""
        for name, day in asked[:5]:
            httpx.get(self.base + "/v1/ask", params={"q": name, "date": day, "strategy": strategy}, timeout=600)
            self.asked.add(name)

    def stop(self) -> float:
        """Stop the API; its peak RSS (MB, VmHWM) before it went."""
        mb = peak_rss_mb(self.process.pid)
        self.process.terminate()
        self.process.join(30)
        return mb


@dataclass(frozen=True)
class Load:
    """What one API process is driven with: per strategy one client alone for `single_seconds` (0: skip),
    `clients` closed-loop clients for `seconds`, and with `half_load` an open loop at half the capacity they
    measured; then each explorer endpoint for `explore_seconds` (0: skip); then the API's floor: `clients` clients
    asking GET /healthz for `floor_seconds` (0: skip)."""

    strategies: tuple[str, ...]
    clients: int
    seconds: float
    single_seconds: float = 0
    explore_seconds: float = 0
    half_load: bool = False
    floor_seconds: float = 0


@dataclass
class Measured:
    """One API process's figures: each strategy under load, with one client alone and at half load (summary()
    plus `cpu_ms`, `fresh`, `asked`), the explorer's endpoints, the seconds to ready and its peak RSS."""

    loaded: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    single: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    half: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    explore: dict[str, dict[str, float]] = field(default_factory=dict[str, dict[str, float]])
    floor: dict[str, float] = field(default_factory=dict[str, float])
    distinct: dict[str, float] = field(default_factory=dict[str, float])
    ready_s: float = 0.0
    api_mb: float = 0.0


def measure(spec: ApiSpec, loaded: Loaded, load: Load, console: Console) -> Measured:
    """`load` against one API process; its peak RSS when it is stopped."""
    api, measured = Api(spec), Measured()
    try:
        measured.ready_s = api.start()
        console.print(f"API ready in {measured.ready_s:.2f} s ({'scan' if spec.brute_force else 'graph'})")
        for strategy in load.strategies:
            measure_strategy(api, loaded.asked, strategy, load, measured, console)
        for endpoint, make in exploring(loaded.asked).items() if load.explore_seconds > 0 else ():
            measured.explore[endpoint] = api.run(closed_loop(api.base, make, 1, load.explore_seconds), endpoint)
            console.print(f"explore {endpoint}, one client: p95 {measured.explore[endpoint]['p95']:.1f} ms")
        if load.floor_seconds > 0:
            measured.floor = api.run(closed_loop(api.base, asking_nothing, load.clients, load.floor_seconds), "floor")
            console.print(f"floor (GET /healthz): {measured.floor['rps']:.1f} requests/s")
    finally:
        measured.api_mb = api.stop()
    return measured


def measure_strategy(
    api: Api, asked: list[tuple[str, str]], strategy: str, load: Load, measured: Measured, console: Console
) -> None:
    """One strategy's runs into `measured`: one client, the capacity, half of it offered; and the share of its
    questions first asked in the API process."""
    api.warm(asked, strategy)
    make = asking(asked, strategy)
    runs: list[dict[str, float]] = []
    if load.single_seconds > 0:
        runs.append(single := api.run(closed_loop(api.base, make, 1, load.single_seconds), f"{strategy}, one client"))
        measured.single[strategy] = single
        console.print(f"{strategy}, one client: p95 {single['p95']:.1f} ms, API CPU {single['cpu_ms']:.1f} ms/answer")
    runs.append(loaded := api.run(closed_loop(api.base, make, load.clients, load.seconds), strategy))
    measured.loaded[strategy] = loaded
    console.print(
        f"{strategy}: {loaded['rps']:.1f} answers/s, p95 {loaded['p95']:.1f} ms, "
        f"API CPU {loaded['cpu_ms']:.1f} ms/answer, {loaded['errors']:.0f} errors"
    )
    if load.half_load and loaded["rps"] > 0:
        rate = loaded["rps"] / 2
        runs.append(
            half := api.run(open_loop(api.base, make, rate, load.seconds), f"{strategy}, half load") | {"offered": rate}
        )
        measured.half[strategy] = half
        console.print(
            f"{strategy} at {rate:.1f}/s offered (half capacity): p95 {half['p95']:.1f} ms "
            f"(the server's own: {half['server_p95']:.1f} ms)"
        )
    measured.distinct[strategy] = sum(r["fresh"] for r in runs) / max(sum(r["asked"] for r in runs), 1)


def peak_rss_mb(pid: int | None) -> float:
    """The peak resident set of one process (VmHWM, MB); 0 when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0.0)


@dataclass(frozen=True)
class Plan:
    """The run the command line asks for: the sizes (ascending), how the API and the scan baseline are driven, the
    profile's answers per strategy and the mirror measured."""

    sizes: tuple[int, ...]
    strategies: tuple[str, ...]
    graph: Load
    scan: Load
    profile_n: int = 0
    lexical_scan: bool = False
    mirror_engine: str = "edge"

    @property
    def mirror_mode(self) -> MirrorMode:
        """No mirror without hybrid (temporal then ranks lexically, as before); else the built Edge shard opened,
        or qdrant-local loaded in the process that uses it."""
        if "hybrid" not in self.strategies:
            return "none"
        return "open" if self.mirror_engine == "edge" else "load"


@dataclass
class SizeRun:
    """One size's figures: the loads, the API and the scan baseline driven, FalkorDB's peak RSS so far, the
    in-process profile."""

    rows: int
    clients: int
    graph_load_s: float
    mirror_load_s: float | None
    graph: Measured
    scan: Measured
    falkordb_mb: float = 0.0
    profile: dict[str, Any] = field(default_factory=dict[str, Any])
    lexical_scan: bool = False
    mirror_engine: str = "edge"


def measure_size(settings: Settings, plan: Plan, rows: int, console: Console, falkordb_pid: int | None) -> SizeRun:
    """One size end to end: a fresh graph, the mirror built (before the API starts), the profile, the API driven,
    the scan baseline driven; the mirror's folder removed after."""
    console.rule(f"{rows:,} interactions")
    loaded = load_graph(settings, rows, console)
    graph_load_s = loaded.seconds
    console.print(
        f"graph: {rows:,} interactions in {graph_load_s:.1f} s ({rows / graph_load_s:,.0f}/s; the daily counts "
        f"{loaded.count_seconds:.1f} s of it); the busiest entity in {loaded.hub_facts:,} facts"
    )
    console.print(f"FalkorDB's persistence settled in {settle_persistence(settings):.1f} s")
    settings = settings.model_copy(update={"qdrant_path": settings.data_dir / f"mirror-{rows}"})
    report = settings.data_dir / f"mirror-load-{rows}.txt"
    spec = ApiSpec(settings, plan.mirror_mode, rows, report, graph_pid=falkordb_pid)
    if spec.mirror == "open":
        in_process(build_mirror, settings, rows, spec.report)
    profile = profiled(spec, loaded.asked, plan)
    graph = measure(spec, loaded, plan.graph, console)
    mirror_load_s = float(spec.report.read_text()) if spec.report.exists() else None
    if mirror_load_s is not None:
        console.print(f"mirror: {rows:,} points in {mirror_load_s:.1f} s ({rows / mirror_load_s:,.0f}/s)")
    scan_mirror: MirrorMode = "none" if plan.lexical_scan else spec.mirror
    scan_spec = replace(spec, mirror=scan_mirror, brute_force=True, report=spec.report.with_suffix(".scan.txt"))
    scan = measure(scan_spec, loaded, plan.scan, console)
    shutil.rmtree(settings.qdrant_local_path, ignore_errors=True)
    lexical = plan.lexical_scan or spec.mirror == "none"
    return SizeRun(
        rows, plan.graph.clients, graph_load_s, mirror_load_s, graph, scan, peak_rss_mb(falkordb_pid), profile,
        lexical, plan.mirror_engine,
    )  # fmt: skip


def settle_persistence(settings: Settings) -> float:
    """The bench's own FalkorDB, after a load: no RDB snapshots (its `save` rules would fork a snapshot of the whole
    graph minutes into the measurement, a core busy for ~half a minute at 1 M), and the AOF rewritten now and waited
    for, so that its growth from the load triggers no rewrite later. The measured runs only read. Returns the
    seconds waited."""
    import redis

    address = urlsplit(settings.graph_uri or "")
    server = redis.Redis(host=address.hostname or "127.0.0.1", port=address.port or 6379)
    start = time.perf_counter()
    server.config_set("save", "")
    while _persisting(server):  # a snapshot or rewrite the load started: the new one must come after it
        time.sleep(0.5)
    server.bgrewriteaof()
    while _persisting(server):
        time.sleep(0.5)
    return time.perf_counter() - start


def _persisting(server: Any) -> bool:
    info = server.info("persistence")
    return any(info.get(key) for key in ("rdb_bgsave_in_progress", "aof_rewrite_in_progress", "aof_rewrite_scheduled"))


def profiled(spec: ApiSpec, asked: list[tuple[str, str]], plan: Plan) -> dict[str, Any]:
    """The in-process profile per strategy (`profile_api`, in a process of its own); {} without `--profile`."""
    if not plan.profile_n:
        return {}
    out = spec.settings.data_dir / f"profile-{spec.rows}.json"
    in_process(profile_api, spec, tuple(asked), plan.strategies, plan.profile_n, out)
    return json.loads(out.read_text())


def size_label(rows: int) -> str:
    """A size as a figure name's suffix: 10000 → 10k, 100000 → 100k, 1000000 → 1m, 2500 → 2_5k, 800 → 800."""
    for unit, scale in (("m", 1_000_000), ("k", 1_000)):
        if rows >= scale:
            return f"{rows / scale:g}".replace(".", "_") + unit
    return str(rows)


def figures(runs: list[SizeRun]) -> dict[str, Figure]:
    """The largest size's figures under the names without a size (the names bench/RESULTS.md has always had); each
    size's main figures again with its size as a suffix (not the profile's, nor p50/p99 under load); and, with
    more than one size, the growth from the smallest to the largest."""
    found = size_figures(runs[-1])
    for run in runs:
        label = size_label(run.rows)
        found |= {f"{name}_{label}": f for name, f in size_figures(run).items() if not _unsuffixed(name)}
    return found | growth_figures(runs)


def _unsuffixed(name: str) -> bool:
    """Figures given for the largest size only."""
    return name.startswith(("qa_profile_", "qa_p50_ms", "qa_p99_ms")) or name == "qa_requests_per_s"


def size_figures(run: SizeRun) -> dict[str, Figure]:
    """Every figure of one size, each with its row count (`rows`)."""
    found = latency_figures(run) | cost_figures(run) | load_figures(run) | explore_figures(run)
    found |= profile_figures(run)
    return {name: sized(f, run.rows) for name, f in found.items()}


def latency_figures(run: SizeRun) -> dict[str, Figure]:
    """Each strategy's latency and capacity under load, the brute-force scan's as the temporal baseline of the
    same run."""
    shape = f"{run.rows:,} interactions, {run.clients} clients"
    scan, loaded = run.scan.loaded["temporal"], run.graph.loaded
    found: dict[str, Figure] = {}
    worst = max(loaded, key=lambda s: loaded[s]["p95"])
    found["qa_p95_ms"] = figure(
        round(loaded[worst]["p95"], 1), f"ms ({shape}; worse strategy: {worst}; baseline: scan)", round(scan["p95"], 1)
    )
    for strategy, r in loaded.items():
        base = scan if strategy == "temporal" else None
        note = "; baseline: scan" if base else ""
        found[f"qa_p95_ms_{strategy}"] = figure(round(r["p95"], 1), f"ms ({shape}{note})", _baseline(base, "p95", 1))
        found[f"qa_p50_ms_{strategy}"] = figure(round(r["p50"], 1), "ms", _baseline(base, "p50", 1))
        found[f"qa_p99_ms_{strategy}"] = figure(round(r["p99"], 1), "ms", _baseline(base, "p99", 1))
        found[f"qa_requests_per_s_{strategy}"] = figure(
            round(r["rps"], 1), f"requests/s{note}", _baseline(base, "rps", 1)
        )
    temporal = loaded.get("temporal", loaded[worst])
    found["qa_p50_ms"] = figure(round(temporal["p50"], 1), "ms, temporal (baseline: scan)", round(scan["p50"], 1))
    found["qa_p99_ms"] = figure(round(temporal["p99"], 1), "ms, temporal (baseline: scan)", round(scan["p99"], 1))
    found["qa_requests_per_s"] = figure(
        round(temporal["rps"], 1), "requests/s, temporal (baseline: scan)", round(scan["rps"], 1)
    )
    if "temporal" in loaded and scan["rps"] > 0:
        found["qa_capacity_vs_scan"] = figure(
            round(loaded["temporal"]["rps"] / scan["rps"], 2),
            f"x: temporal answers/s ({loaded['temporal']['rps']:.1f}) over the brute-force scan's "
            f"({scan['rps']:.1f}, {run.scan.loaded['temporal']['requests']:.0f} answered), {run.rows:,} interactions",
        )
    return found | floor_figures(run) | bound_figures(run)


def floor_figures(run: SizeRun) -> dict[str, Figure]:
    """The API's floor (GET /healthz under the same clients) and what it leaves qa_capacity_vs_scan: an answer path
    that cost nothing would reach floor / scan, no more."""
    floor, scan = run.graph.floor, run.scan.loaded["temporal"]
    if not floor or not scan["rps"]:
        return {}
    return {
        "qa_api_floor_requests_per_s": figure(
            round(floor["rps"], 1),
            f"requests/s, GET /healthz (no graph read, no ranking) through the same API process, gate and driver, "
            f"{run.clients} clients (API CPU {floor['cpu_ms']:.2f} ms, driver {floor.get('driver_cpu_ms', 0):.2f} "
            "ms a request): the most answers/s any answer path could reach here",
        ),
        "qa_capacity_ceiling_vs_scan": figure(
            round(floor["rps"] / scan["rps"], 2),
            f"x: that floor over the scan's answers/s ({scan['rps']:.1f}), {run.rows:,} interactions: the most "
            "qa_capacity_vs_scan could be on these cores",
        ),
    }


def bound_figures(run: SizeRun) -> dict[str, Figure]:
    """An upper bound of qa_capacity_vs_scan, and a generous one: the temporal answers/s were FalkorDB's CPU free,
    every core of this process's affinity busy on what an answer still costs the API (its client side of the reads
    included: building the queries, decoding the replies) and this driver, at their CPU per answer under load, over
    the scan's answers/s. Generous because the API is one Python process, which the GIL keeps near one core (its
    floor, GET /healthz, used ~1.05). No saving in FalkorDB's own work takes the capacity past it; only a cheaper
    API side of an answer raises it (the scan runs the same API around its read: at 10k, where its read is cheap,
    that speeds it nearly as much)."""
    temporal, scan = run.graph.loaded.get("temporal"), run.scan.loaded["temporal"]
    if not temporal or not scan["rps"] or "driver_cpu_ms" not in temporal or "cpu_ms" not in temporal:
        return {}
    rest_ms = temporal["cpu_ms"] + temporal["driver_cpu_ms"]
    if rest_ms <= 0:  # /proc counts in 10 ms ticks: a run too short to measure bounds nothing
        return {}
    cores = usable_cores()
    bound = cores * 1000 / rest_ms
    return {
        "qa_capacity_bound_vs_scan": figure(
            round(bound / scan["rps"], 2),
            f"x: {bound:.0f} answers/s ({cores} cores over the API's {temporal['cpu_ms']:.2f} ms and the driver's "
            f"{temporal['driver_cpu_ms']:.2f} ms of CPU per temporal answer under load, FalkorDB's CPU taken as "
            f"free) over the scan's {scan['rps']:.1f}, {run.rows:,} interactions: an upper bound of "
            "qa_capacity_vs_scan with this API (a generous one: the API is one process, near one core)",
        )
    }


def usable_cores() -> int:
    """The cores this process may run on (its affinity: a container's cpuset, a taskset), not the machine's."""
    return len(os.sched_getaffinity(0)) or 1


def _baseline(base: dict[str, float] | None, key: str, digits: int) -> float | None:
    """The scan's figure as a baseline, where it is one (temporal's)."""
    return round(base[key], digits) if base is not None else None


def cost_figures(run: SizeRun) -> dict[str, Figure]:
    """What an answer costs the API (CPU per answer, one client and under load), one client's latency, the API's
    peak RSS and readiness, and the errors of every run."""
    rows, scan = run.rows, run.scan.loaded["temporal"]
    shape = f"{rows:,} interactions, {run.clients} clients"
    scan_note = "lexical scan: no mirror, no embedding" if run.lexical_scan else "scan: the same mirror and embedder"
    per_answer = "ms of API CPU (/proc user+system) per answer"
    found: dict[str, Figure] = {}
    for strategy, r in run.graph.loaded.items():
        base = scan if strategy == "temporal" else None
        found[f"qa_cpu_ms_per_answer_loaded_{strategy}"] = figure(
            round(r["cpu_ms"], 2),
            f"{per_answer}, {shape}" + (f"; baseline: {scan_note}" if base else ""),
            _baseline(base, "cpu_ms", 2),
        )
        for key, whose in (("graph_cpu_ms", "FalkorDB's"), ("driver_cpu_ms", "the load driver's (this process)")):
            if key not in r:
                continue
            found[f"qa_{key.replace('_cpu_ms', '')}_cpu_ms_per_answer_loaded_{strategy}"] = figure(
                round(r[key], 2),
                f"ms of {whose} CPU per answer, {shape}: with the API's, what one answer costs the 2 cores, which "
                f"bounds the capacity" + (f"; baseline: {scan_note}" if base else ""),
                _baseline(base, key, 2),
            )
    for strategy, r in run.graph.single.items():
        one = f"one client, {rows:,} interactions"
        found[f"qa_cpu_ms_per_answer_{strategy}"] = figure(round(r["cpu_ms"], 2), f"{per_answer}, {one}")
        found[f"qa_p95_ms_single_client_{strategy}"] = figure(round(r["p95"], 1), f"ms, {one}")
        found[f"qa_p50_ms_single_client_{strategy}"] = figure(round(r["p50"], 1), f"ms, {one}")
    found["qa_api_peak_rss_mb"] = figure(round(run.graph.api_mb), f"MB, the API process (VmHWM), {shape}")
    found["qa_falkordb_peak_rss_mb"] = figure(round(run.falkordb_mb), "MB, FalkorDB's redis-server (VmHWM) so far")
    loaded_in_api = run.mirror_engine != "edge" and run.mirror_load_s is not None
    found["qa_ready_s"] = figure(
        round(run.graph.ready_s, 2),
        f"s from spawning the API (as `newskg serve` builds it, warm-up included) to its first 200 from /readyz, "
        f"{rows:,} interactions" + (f" ({run.mirror_engine}: the mirror's load included)" if loaded_in_api else ""),
    )
    return found | error_figures(run)


def error_figures(run: SizeRun) -> dict[str, Figure]:
    """Failed or non-200 requests: the strategies' every run, the explorer's, the scan's."""
    runs = [*run.graph.loaded.values(), *run.graph.single.values(), *run.graph.half.values()]
    explored, scan = list(run.graph.explore.values()), run.scan.loaded["temporal"]
    return {
        "qa_errors": figure(
            sum(int(r["errors"]) for r in runs),
            f"failed or non-200, all strategies, all runs (with {sum(int(r['requests']) for r in runs)} answered)",
        ),
        "qa_explore_errors": figure(
            sum(int(r["errors"]) for r in explored),
            f"failed or non-200, explorer endpoints (with {sum(int(r['requests']) for r in explored)} answered)",
        ),
        "qa_scan_errors": figure(
            scan["errors"], f"failed or non-200, scan baseline (with {scan['requests']:.0f} answered)"
        ),
    }


def load_figures(run: SizeRun) -> dict[str, Figure]:
    """The loads' seconds, each strategy's p95 at half its capacity (open loop) and how warm the embedding cache
    was."""
    found = {"qa_graph_load_s": figure(round(run.graph_load_s, 1), f"s, {run.rows:,} interactions by UNWIND batches")}
    if run.mirror_load_s is not None:
        where = "in a process of its own, before the API" if run.mirror_engine == "edge" else "in the API process"
        found["qa_mirror_load_s"] = figure(
            round(run.mirror_load_s, 1),
            f"s, {run.rows:,} points upserted and indexed ({run.mirror_engine}, bulk path, seeded vectors, {where})",
        )
    for strategy, r in run.graph.half.items():
        found[f"qa_p95_ms_half_load_{strategy}"] = figure(
            round(r["p95"], 1),
            f"ms from the scheduled send, open loop at {r['offered']:.1f} requests/s offered (half the capacity "
            f"measured), {run.rows:,} interactions ({r['requests']:.0f} answered, p50 {r['p50']:.1f} ms)",
        )
        found[f"qa_p95_ms_half_load_server_{strategy}"] = figure(
            round(r["server_p95"], 1),
            "ms the API itself spent on the same answers (its Server-Timing: from the app receiving a request to "
            f"its response starting; p50 {r['server_p50']:.1f} ms): the rest of qa_p95_ms_half_load_{strategy} is "
            "the connection, the API's event loop before the app and this driver, on the same cores",
        )
    for strategy, share in run.graph.distinct.items():
        found[f"qa_distinct_questions_share_{strategy}"] = figure(
            round(share, 3),
            "questions (entity names) not asked before in the API process / requests, over the strategy's "
            "one-client, capacity and half-load runs: the rest can hit the embedding cache",
        )
    return found


def explore_figures(run: SizeRun) -> dict[str, Figure]:
    """The explorer's endpoints, one client each."""
    return {
        f"qa_explore_p95_ms_{endpoint}": figure(
            round(r["p95"], 1),
            f"ms, one client, {run.rows:,} interactions ({r['requests']:.0f} answered, p50 {r['p50']:.1f} ms)",
        )
        for endpoint, r in run.graph.explore.items()
    }


def profile_figures(run: SizeRun) -> dict[str, Figure]:
    """The in-process profile: CPU ms per answer by phase, the answer's two paths, the texts embedded."""
    found: dict[str, Figure] = {}
    for strategy, profiled in run.profile.items():
        for phase, ms in profiled["phases"].items():
            found[f"qa_profile_{strategy}_{phase}_cpu_ms"] = figure(
                ms["cpu_ms"],
                f"ms of CPU per answer in process (wall {ms['wall_ms']} ms; the query's embedding cold), "
                f"{run.rows:,} interactions",
            )
        if paths := profiled.get("answer_paths"):
            found[f"qa_profile_{strategy}_answer_cpu_ms_reusing_similarities"] = figure(
                paths["reuse_cpu_ms"],
                f"ms of CPU per extractive answer, the same {paths['answers']} evidence lists; baseline: "
                "embedding every evidence sentence per request (before issue 30), same run",
                paths["embed_per_request_cpu_ms"],
            )
        embedded = profiled["embedded_texts_per_answer"]
        found[f"qa_profile_{strategy}_embedded_texts_per_answer"] = figure(
            round(sum(embedded.values()), 2),
            "texts embedded per answer, by the phase asking: "
            + (", ".join(f"{k} {v}" for k, v in embedded.items()) or "none"),
        )
    return found


def growth_figures(runs: list[SizeRun]) -> dict[str, Figure]:
    """Per strategy, the p95 at half capacity at the largest size over the smallest (issue 30: ≤ 1.5); none with
    one size."""
    small, large = runs[0], runs[-1]
    if small.rows == large.rows:
        return {}
    found: dict[str, Figure] = {}
    for strategy in large.graph.half.keys() & small.graph.half.keys():
        before, after = small.graph.half[strategy]["p95"], large.graph.half[strategy]["p95"]
        found[f"qa_p95_growth_{strategy}"] = sized(
            figure(
                round(after / before, 3) if before else float("nan"),
                f"x: p95 at half capacity, {large.rows:,} interactions ({after:.1f} ms) over {small.rows:,} "
                f"({before:.1f} ms)",
            ),
            large.rows,
        )
    return found


def sized(found: Figure, rows: int) -> Figure:
    """A figure with the row count it was measured at (issue 30's names carry it as a field, not only in the unit)."""
    return found | {"rows": rows}


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=100_000, help="one size (without --sizes)")
    parser.add_argument("--sizes", default=None, help="comma-separated sizes, measured ascending in one run")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60, help="the capacity run and the half-load run, each")
    parser.add_argument("--scan-seconds", type=float, default=None, help="for the baseline (default: --seconds)")
    parser.add_argument("--scan-clients", type=int, default=None, help="for the baseline (default: --clients)")
    parser.add_argument("--strategies", default=",".join(STRATEGIES), help="comma-separated: temporal,hybrid")
    parser.add_argument("--threads", type=int, default=None, help="the API's request threads (NEWSKG_API_THREADS)")
    parser.add_argument(
        "--embed-threads", type=int, default=None, help="the API's ONNX Runtime threads (NEWSKG_API_EMBED_THREADS)"
    )
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    parser.add_argument(
        "--single-seconds", type=float, default=10, help="one client alone per strategy, before the load (0: skip)"
    )
    parser.add_argument(
        "--explore-seconds", type=float, default=5, help="one client per explorer endpoint, per size (0: skip)"
    )
    parser.add_argument(
        "--floor-seconds", type=float, default=10, help="clients asking /healthz: the API's floor, per size (0: skip)"
    )
    parser.add_argument("--profile", type=int, default=200, help="answers per strategy profiled in process (0: skip)")
    parser.add_argument(
        "--lexical-scan", action="store_true", help="the scan baseline without the mirror (lexical, no embedding)"
    )
    parser.add_argument(
        "--mirror-engine", choices=("edge", "qdrant-local"), default="edge", help="the embedded mirror measured"
    )
    return parser.parse_args()


def plan_of(args: argparse.Namespace) -> Plan:
    strategies = tuple(s for s in args.strategies.split(",") if s)
    sizes = sorted({int(s) for s in args.sizes.split(",") if s}) if args.sizes else [args.rows]
    graph = Load(
        strategies, args.clients, args.seconds, args.single_seconds, args.explore_seconds, True, args.floor_seconds
    )
    scan = Load(("temporal",), args.scan_clients or args.clients, args.scan_seconds or args.seconds)
    return Plan(tuple(sizes), strategies, graph, scan, args.profile, args.lexical_scan, args.mirror_engine)


def bench_settings(args: argparse.Namespace) -> Settings:
    settings = Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="bench-qa-")),
        graph_database="bench_qa",
        mirror_engine=args.mirror_engine,
        _env_file=None,  # pyright: ignore[reportCallIssue]
    )
    if args.threads:
        settings = settings.model_copy(update={"api_threads": args.threads})
    if args.embed_threads:
        settings = settings.model_copy(update={"api_embed_threads": args.embed_threads})
    return settings


def main() -> None:
    args = parse_args()
    plan = plan_of(args)
    console = Console(width=120, stderr=args.json)
    settings = bench_settings(args)
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    try:
        graph_service = manager.state.load()["graph"]
        settings = settings.model_copy(update={"graph_uri": graph_service.address})
        runs = [measure_size(settings, plan, rows, console, graph_service.pid) for rows in plan.sizes]
    finally:
        manager.down()
        shutil.rmtree(settings.data_dir, ignore_errors=True)
    if args.json:
        emit(figures(runs), " ".join(["python -m bench.qa", *sys.argv[1:]]))
    for run in runs:
        report(run, plan, console)
    if len(runs) > 1:
        console.print(growth_table(runs))


def report(run: SizeRun, plan: Plan, console: Console) -> None:
    table = Table(
        title=f"/v1/ask (extractive), {run.rows:,} interactions, {run.clients} clients, {plan.graph.seconds:.0f} s each"
    )
    for column in ("retrieval", "p50 ms", "p95 ms", "p99 ms", "requests/s", "API CPU ms/answer", "errors"):
        table.add_column(column, justify="right")
    scan_name = "temporal, brute-force scan" + (" (lexical, no mirror)" if run.lexical_scan else "")
    measured = run.graph
    rows = [(f"{s} (graph + indexes)", r) for s, r in measured.loaded.items()]
    rows += [(f"{s}, one client", r) for s, r in measured.single.items()]
    rows += [(f"{s}, half capacity (open loop)", r) for s, r in measured.half.items()]
    rows += [(f"explore {e}, one client", r) for e, r in measured.explore.items()] + [
        (scan_name, run.scan.loaded["temporal"])
    ]
    rows += [("floor: GET /healthz", measured.floor)] if measured.floor else []
    for name, r in rows:
        cells = (r["p50"], r["p95"], r["p99"], r["rps"], r["cpu_ms"])
        table.add_row(name, *(f"{x:.1f}" for x in cells), str(int(r["errors"])))
    console.print(table)
    if run.profile:
        console.print(profile_table(run))
    worst = max(r["p95"] for r in measured.loaded.values())
    mirror = f", mirror {run.mirror_load_s:.1f} s" if run.mirror_load_s is not None else ""
    console.print(
        f"p95 goal < 150 ms: {'met' if worst < 150 else 'missed'} (worse strategy {worst:.1f} ms); "
        f"load: graph {run.graph_load_s:.1f} s{mirror}; API ready in {measured.ready_s:.2f} s; peak RSS: API "
        f"{measured.api_mb:,.0f} MB, FalkorDB {run.falkordb_mb:,.0f} MB; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )


def growth_table(runs: list[SizeRun]) -> Table:
    """The sizes side by side: what issue 30 wants flat."""
    table = Table(title="growth: the same figures at each size")
    table.add_column("figure")
    for run in runs:
        table.add_column(f"{run.rows:,}", justify="right")
    by_size = [size_figures(run) for run in runs]
    names = [n for n in by_size[-1] if not _unsuffixed(n) and "errors" not in n]
    for name in names:
        table.add_row(name, *(f"{found[name]['value']:,}" if name in found else "-" for found in by_size))
    return table


def profile_table(run: SizeRun) -> Table:
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
