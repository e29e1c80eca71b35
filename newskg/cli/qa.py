"""`newskg ask` and `newskg serve`."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, err_console, fail
from newskg.core.settings import get_settings
from newskg.wiring import NotConfigured, Wiring, api_settings

if TYPE_CHECKING:
    from newskg.pipeline import PipelineThread
    from newskg.qa.service import QAService

app = typer.Typer()  # ask, serve: top-level commands

IMPORTED = time.perf_counter()

STRATEGY = typer.Option("hybrid", "--strategy", help="temporal | generic | hybrid | newsrag")


@app.command()
def ask(
    query: str = typer.Argument(..., help="A telegraphic query, e.g. 'doja cat news'."),
    date: str = typer.Option(..., "--date", help="The query's date, YYYY-MM-DD: the graph as it stood then."),
    strategy: str = STRATEGY,
    k: int = typer.Option(10, "--k", min=1, max=50),
    knowledge: str = typer.Option(
        "ingested",
        "--knowledge",
        help="ingested: what the system knew at the end of --date (published and "
        "ingested by then) | published: everything published by --date, also what "
        "was ingested later (labelled as such).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Answer an entity-centric temporal query from the graph and its mirror."""
    from newskg.core.timeaxes import day_key
    from newskg.graph.store.asof import KNOWLEDGE
    from newskg.qa.retrieve import STRATEGIES

    if strategy not in STRATEGIES:
        fail(f"--strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if knowledge not in KNOWLEDGE:
        fail(f"--knowledge must be one of {', '.join(KNOWLEDGE)}, not {knowledge!r}")
    try:
        day = day_key(date)
    except (ValueError, TypeError):
        fail(f"--date {date!r} is not a date (use YYYY-MM-DD)")
    from newskg.qa.dates import FIRST_YEAR, LAST_YEAR

    if (
        not FIRST_YEAR <= day // 10000 <= LAST_YEAR
    ):  # the API's bound (qa/contract.py): a day's window must not overflow
        fail(f"--date {date!r} is outside the years QA serves ({FIRST_YEAR}-{LAST_YEAR})")
    with Wiring(get_settings()) as wiring:
        try:
            service = _warm_service(wiring)
        except NotConfigured as exc:
            fail(str(exc))
        startup_ms = process_age_ms()
        asked = time.perf_counter()
        result = service.ask(query, date, k=k, strategy=strategy, knowledge=knowledge).as_dict()
        result |= {"startup_ms": round(startup_ms, 1), "query_ms": round((time.perf_counter() - asked) * 1000, 1)}
    emit(result, as_json, _render)


def _warm_service(wiring: Wiring) -> QAService:
    """The QA service with its models loaded and warm, so the query's time is the query's: the embedding model
    loads in a thread while the graph and the mirror connect, then the other warm-up steps of the API run
    (qa/warmup.py). Any failure is raised here, as the query would have raised it."""
    from concurrent.futures import ThreadPoolExecutor

    from newskg.pipeline import qa_service
    from newskg.qa.warmup import WARM_TEXT, service_steps

    embedder = wiring.embedder()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="warmup") as pool:
        loading = pool.submit(embedder.embed, [WARM_TEXT])
        service = qa_service(wiring)
        loading.result()
    for name, step in service_steps(service).items():
        if name != "embedder":
            step()
    return service


def process_age_ms() -> float:
    """Time since this process started (interpreter, imports, connections, warm-up), from /proc; since the CLI
    module was imported where /proc is not there."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
        boot = next(
            float(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line[:5] == "btime"
        )
        return (time.time() - boot - ticks / os.sysconf("SC_CLK_TCK")) * 1000
    except (OSError, ValueError, IndexError, StopIteration):
        return (time.perf_counter() - IMPORTED) * 1000


def _render(r: dict[str, Any]) -> None:
    entity = r["entity"]
    named = f"{entity['name']} ({entity['id']})" if entity else "-"
    console.print(
        f"[bold]{r['reformulated']}[/]  entity: {named}  strategy: {r['strategy']}  {r['latency_ms']} ms "
        f"(start-up {r['startup_ms'] / 1000:.1f} s)"
    )
    if r["knowledge"] != "ingested":
        console.print(f"[yellow]{r['knowledge_label']}[/]")
    if r["ambiguous"]:
        console.print("[yellow]ambiguous; also:[/] " + ", ".join(a["name"] for a in r["alternatives"]))
    console.print(r["answer"])
    if r["answer_mode"] == "extractive_fallback":
        console.print(f"[yellow]the LLM failed, so this is the extractive answer:[/] {r['fallback_reason']}")
    if r["note"]:
        console.print(f"[yellow]{r['note']}[/]")
    table = Table(title="evidence")
    for column in ("day", "text", "sources", "score"):
        table.add_column(column, overflow="fold")
    for e in r["evidence"]:
        table.add_row(str(e["event_day"]), e["text"], ", ".join(e["sources"]), f"{e['score']:.3f}")
    console.print(table)


# After the pipeline stops, /readyz answers 503 this long before the server exits (a probe or a load balancer
# sees the failure, not only a vanished process).
FAILED_PIPELINE_GRACE_S = 5.0


@app.command()
def serve(
    pipeline: bool = typer.Option(
        False,
        "--pipeline",
        help="Host the process and extract stages in this process (embedded mode: local Qdrant admits one process).",
    ),
    host: str | None = typer.Option(None, "--host"),
    port: int | None = typer.Option(None, "--port"),
) -> None:
    """The always-current QA HTTP API (/v1/ask, /v1/entities, /healthz, /readyz, /metrics, /docs). With
    --pipeline, if the stages stop /readyz turns 503 and the process exits with code 1."""
    settings = api_settings(get_settings())
    with Wiring(settings) as wiring:  # the stages and the QA service share its one mirror
        stages = _serve(wiring, pipeline, host, port)
    if stages and stages.failure:
        fail(f"the pipeline stopped: {stages.failure}", code=1)


def _serve(wiring: Wiring, pipeline: bool, host: str | None, port: int | None) -> PipelineThread | None:
    """Serve until the server stops; the stages (with --pipeline) are stopped and joined before `wiring` closes
    the clients they use."""
    import uvicorn

    from newskg.ingest.kafka.membership import GroupMembershipError
    from newskg.pipeline import PipelineThread, build_runners, qa_checks, qa_service
    from newskg.qa.api import create_app, serve_metrics
    from newskg.qa.warmup import Warmup, service_steps
    from newskg.services.servers import kafka_healthy
    from newskg.wiring import kafka_bootstrap

    settings = wiring.settings
    try:
        service = qa_service(wiring)  # with the bundle's mirror
    except NotConfigured as exc:
        fail(str(exc))
    # The models load and warm in the background while the server already answers /readyz (503 "warming").
    warmup = Warmup(service_steps(service))
    readiness: dict[str, Callable[[], bool]] = {
        "broker": lambda: kafka_healthy(kafka_bootstrap(settings)),
        **qa_checks(service),
    }
    stop, stages = threading.Event(), None
    if pipeline:
        try:
            runners = build_runners(wiring, ["process", "extract"])
        except GroupMembershipError as exc:
            fail(str(exc), code=1)

        def stopped(reason: str) -> None:
            err_console.print(
                f"[bold red]error:[/] the pipeline stopped ({reason}); /readyz answers 503 and the "
                f"server exits in {FAILED_PIPELINE_GRACE_S:.0f} s"
            )
            exit_later = threading.Timer(FAILED_PIPELINE_GRACE_S, lambda: setattr(server, "should_exit", True))
            exit_later.daemon = True
            exit_later.start()

        stages = PipelineThread(runners, stop, settings.kafka_join_timeout_s, stopped)
        readiness["stages"] = stages.healthy
    app_ = create_app(
        service,
        readiness,
        settings.api_keys,
        settings.api_max_query_chars,
        settings.api_threads,
        warmup=warmup,
        spikes_file=settings.explore_spikes_path,
    )
    server = uvicorn.Server(
        uvicorn.Config(app_, host=host or settings.api_host, port=port or settings.api_port, log_level="warning")
    )
    metrics = None
    if settings.api_metrics_port:
        metrics = serve_metrics(app_, host or settings.api_host, settings.api_metrics_port)
    if stages:
        stages.start()
    console.print(
        f"serving on http://{server.config.host}:{server.config.port} "
        f"({'with' if pipeline else 'without'} the pipeline)"
        + (f"; metrics without a key on port {metrics.port}" if metrics else "")
    )
    try:
        server.run()
    finally:
        stop.set()  # the stages finish the batch in hand and commit, then stop
        if metrics:
            metrics.close()
        if stages:
            stages.thread.join(timeout=60)
    return stages
