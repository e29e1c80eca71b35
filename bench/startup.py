"""Start-up and memory: no cold first query, and the peak RSS of every process of the pipeline and of the API.

On local servers of a temporary data dir (`newskg services up`: noida broker, FalkorDB; Qdrant local mode), a small
stream goes through the real stage processes, one after the other, each its own `newskg` subprocess whose peak
RSS is read from the kernel when it exits (`wait4` ru_maxrss): `ingest files` (the bundled news pages),
`run process --until-idle` and `run extract --until-idle` (M0 extraction, then the graph and the embedded mirror in
the same stage: there is no separate graph or mirror process). `--articles` synthetic articles (default 40) join the
pages so the hybrid queries have people to ask about.

Then the API (`newskg serve`) starts as a subprocess: /readyz is polled every 20 ms from process start until 200
(`api_ready_s`; the 503 "warming" answers seen on the way are counted), then the first hybrid /v1/ask is fired at
once and `--queries` more (default 100) after it, each about another person or day (the same kind of work:
resolution, graph read, embedding, mirror search). `first_query_vs_median`: the first query's ms against the
median of the rest (goal ≤ 2). `api_rss_mb`: the API's VmHWM from /proc after the queries, the embedding model
loaded (goal < 1024). Last, `newskg ask --json` (hybrid) `--ask-runs` times (default 2): its own start-up
(`startup_ms`: process start to warm) against its query (`query_ms`), medians.
Run: `make bench` or `.venv/bin/python -m bench.startup [--articles N] [--queries N] [--json]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.soak import PEOPLE, private_stack, synthetic_article
from newskg.core.settings import Settings
from newskg.ingest.process.article import raw_article_id
from newskg.ingest.publish import ArticlePublisher
from newskg.ingest.sources.files import SourceItem
from newskg.pipeline import articles_producer
from newskg.services.process import free_port, stop_child
from newskg.wiring import Wiring

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "tests" / "fixtures" / "news-html"
DAY = "2023-06-01"  # the synthetic articles' publication day; queries ask as of it and the days after
RSS_GOAL_MB = 1024.0
FIRST_QUERY_GOAL = 2.0


@dataclass
class Run:
    """One `newskg` subprocess: wall seconds, peak RSS (MB), exit code and its standard output."""

    args: list[str]
    seconds: float
    peak_rss_mb: float
    returncode: int
    output: str


def run_measured(args: list[str], env: dict[str, str], folder: Path) -> Run:
    """`python -m newskg ARGS` to its end; its peak RSS from the kernel (`wait4`: this child's own ru_maxrss)."""
    name = "-".join(a.strip("-") for a in args[:2])
    stdout, stderr = folder / f"{name}.out", folder / f"{name}.err"
    start = time.perf_counter()
    with stdout.open("w") as out, stderr.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "newskg", *args], env=env, cwd=REPO, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait for it again
    run = Run(args, time.perf_counter() - start, usage.ru_maxrss / 1024, proc.returncode, stdout.read_text())
    if run.returncode != 0:
        raise RuntimeError(f"newskg {' '.join(args)} exited {run.returncode}:\n{stderr.read_text()[-3000:]}")
    return run


def publish_synthetic(settings: Settings, articles: int) -> None:
    rng = random.Random(3)
    raws = [synthetic_article(n, rng, DAY) for n in range(articles)]
    with Wiring(settings) as wiring:
        report = ArticlePublisher(articles_producer(wiring), settings.topic_articles).publish(
            SourceItem(raw_article_id(r), r, f"bench:{r.url}") for r in raws
        )
    if report.sent != articles:
        raise RuntimeError(f"articles refused by the broker: {report.failed}")


def stream(settings: Settings, env: dict[str, str], folder: Path, articles: int) -> dict[str, Run]:
    """The small stream through each stage process in turn; {stage: its run}."""
    runs = {"ingest": run_measured(["ingest", "files", str(PAGES), "--date", "2020-01-01", "--backfill"], env, folder)}
    publish_synthetic(settings, articles)
    for stage in ("process", "extract"):
        runs[stage] = run_measured(["run", stage, "--until-idle", "--json"], env, folder)
    return runs


@dataclass
class ApiRun:
    ready_s: float = float("nan")
    warming_answers: int = 0  # 503 "warming" seen before ready
    other_not_ready: list[str] = field(default_factory=list[str])
    warmup_ms: dict[str, float] = field(default_factory=dict[str, float])
    first_ms: float = float("nan")
    rest_ms: list[float] = field(default_factory=list[float])
    errors: int = 0
    rss_mb: float = float("nan")


def queries(n: int) -> list[dict[str, Any]]:
    """n hybrid queries, each about another person or day than the one before."""
    start = dt.date.fromisoformat(DAY)
    return [
        {"q": f"{PEOPLE[i % len(PEOPLE)]} news", "date": (start + dt.timedelta(days=i // len(PEOPLE))).isoformat()}
        | {"strategy": "hybrid", "k": 10}
        for i in range(n)
    ]


def measure_api(env: dict[str, str], folder: Path, n: int) -> ApiRun:
    port, result = free_port(), ApiRun()
    base = f"http://127.0.0.1:{port}"
    started = time.perf_counter()
    with (folder / "serve.log").open("w") as out:
        server = subprocess.Popen(
            [sys.executable, "-m", "newskg", "serve", "--host", "127.0.0.1", "--port", str(port)],
            env=env,
            cwd=REPO,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        with httpx.Client(base_url=base, timeout=120) as http:
            body = wait_ready(http, server, result)
            result.ready_s = time.perf_counter() - started
            result.warmup_ms = body.get("warmup_ms", {})
            for i, params in enumerate(queries(n + 1)):
                t0 = time.perf_counter()
                answer = http.get("/v1/ask", params=params)
                ms = (time.perf_counter() - t0) * 1000
                result.errors += answer.status_code != 200
                if i == 0:
                    result.first_ms = ms
                else:
                    result.rest_ms.append(ms)
        result.rss_mb = peak_rss_mb(server.pid)
    finally:
        stop_child(server)
    return result


def wait_ready(http: httpx.Client, server: subprocess.Popen[bytes], result: ApiRun, timeout_s: float = 600) -> Any:
    """Poll /readyz from process start until 200; count what it said before."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the API exited with {server.returncode} before it was ready")
        try:
            answer = http.get("/readyz", timeout=5)
        except httpx.TransportError:  # not listening yet
            time.sleep(0.02)
            continue
        if answer.status_code == 200:
            return answer.json()
        reason = answer.json().get("reason")
        if reason == "warming":
            result.warming_answers += 1
        else:
            result.other_not_ready.append(str(reason))
        time.sleep(0.02)
    raise RuntimeError("the API was not ready in time")


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set so far (VmHWM), MB."""
    status = Path(f"/proc/{pid}/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024


def measure_ask(env: dict[str, str], folder: Path, runs: int) -> list[tuple[dict[str, Any], Run]]:
    asked: list[tuple[dict[str, Any], Run]] = []
    for i in range(runs):
        args = ["ask", f"{PEOPLE[i % len(PEOPLE)]} news", "--date", DAY, "--strategy", "hybrid", "--json"]
        run = run_measured(args, env, folder)
        asked.append((json.loads(run.output), run))
    return asked


def figures(stages: dict[str, Run], api: ApiRun, asked: list[tuple[dict[str, Any], Run]]) -> dict[str, Figure]:
    median = statistics.median(api.rest_ms)
    n = len(api.rest_ms)
    startup = statistics.median(a["startup_ms"] for a, _ in asked)
    query = statistics.median(a["query_ms"] for a, _ in asked)
    out: dict[str, Figure] = {
        "first_query_vs_median": figure(
            round(api.first_ms, 1),
            f"ms, first hybrid /v1/ask right after /readyz 200 (baseline: median of the next {n}; goal ratio ≤ 2)",
            round(median, 1),
        ),
        "api_ready_s": figure(
            round(api.ready_s, 2), f"s, process start to /readyz 200 ({api.warming_answers} 503 warming)"
        ),
        "api_rss_mb": figure(
            round(api.rss_mb, 1),
            f"MB peak RSS (VmHWM) of the API, embeddings loaded (baseline: goal {RSS_GOAL_MB:.0f})",
            RSS_GOAL_MB,
        ),
        "api_query_errors": figure(api.errors, f"non-200 of {n + 1} queries"),
        "ask_startup_ms": figure(
            round(startup, 1),
            "ms, `newskg ask` process start to warm (median; baseline: its query_ms)",
            round(query, 1),
        ),
        "ask_query_ms": figure(round(query, 1), "ms, `newskg ask` query after warm-up (median)"),
        "rss_mb_ask": figure(round(max(r.peak_rss_mb for _, r in asked), 1), "MB peak RSS of `newskg ask` (hybrid)"),
    }
    for name, ms in api.warmup_ms.items():
        out[f"api_warmup_{name}_ms"] = figure(ms, f"ms, warm-up step {name} before ready")
    for stage, run in stages.items():
        out[f"rss_mb_{stage}"] = figure(round(run.peak_rss_mb, 1), f"MB peak RSS of `newskg {' '.join(run.args[:2])}`")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--articles", type=int, default=40, help="synthetic articles beside the bundled pages")
    parser.add_argument("--queries", type=int, default=100, help="queries after the first")
    parser.add_argument("--ask-runs", type=int, default=2)
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    console = Console(width=120, stderr=args.json)
    folder = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    manager, settings, env = private_stack(folder)
    try:
        with console.status("the stream through each stage process"):
            stages = stream(settings, env, folder, args.articles)
        with console.status("the API: start, ready, first query, then the rest"):
            api = measure_api(env, folder, args.queries)
        with console.status("newskg ask"):
            asked = measure_ask(env, folder, args.ask_runs)
    finally:
        manager.down()
    results = figures(stages, api, asked)
    if args.json:
        emit(results, " ".join(["python -m bench.startup", *sys.argv[1:]]))
    table = Table(title=f"start-up and memory (load average {os.getloadavg()[0]:.2f})")
    for column in ("figure", "value", "baseline", "ratio", "unit"):
        table.add_column(column, overflow="fold")
    for name, f in results.items():
        table.add_row(name, str(f["value"]), str(f["baseline"] or ""), str(f["ratio"] or ""), f["unit"])
    console.print(table)
    if api.other_not_ready:
        console.print(f"[yellow]/readyz also said: {sorted(set(api.other_not_ready))}[/]")
    ratio = results["first_query_vs_median"]["ratio"] or float("inf")
    console.print(
        f"first query ≤ {FIRST_QUERY_GOAL:g}x median: {'met' if ratio <= FIRST_QUERY_GOAL else 'missed'} ({ratio}x); "
        f"API RSS < {RSS_GOAL_MB:.0f} MB: {'met' if api.rss_mb < RSS_GOAL_MB else 'missed'} ({api.rss_mb:.0f} MB)"
    )


if __name__ == "__main__":
    main()
