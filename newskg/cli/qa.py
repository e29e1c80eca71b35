"""`newskg ask` and `newskg serve`."""

from __future__ import annotations

import threading

import typer
from rich.table import Table

from core.settings import get_settings
from newskg.cli.app import app
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.wiring import NotConfigured

STRATEGY = typer.Option("hybrid", "--strategy", help="temporal | generic | hybrid | newsrag")


@app.command()
def ask(
    query: str = typer.Argument(..., help="A telegraphic query, e.g. 'doja cat news'."),
    date: str = typer.Option(..., "--date", help="The query's date, YYYY-MM-DD: the graph as it stood then."),
    strategy: str = STRATEGY,
    k: int = typer.Option(10, "--k", min=1, max=50),
    knowledge: str = typer.Option("ingested", "--knowledge",
                                  help="ingested: what the system knew at the end of --date (published and "
                                       "ingested by then) | published: everything published by --date, also what "
                                       "was ingested later (labelled as such)."),
    as_json: bool = JsonOption,
) -> None:
    """Answer an entity-centric temporal query from the graph and its mirror."""
    from core.timeaxes import day_key
    from graph.store.asof import KNOWLEDGE
    from newskg.pipeline import qa_service
    from qa.retrieve import STRATEGIES

    if strategy not in STRATEGIES:
        fail(f"--strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
    if knowledge not in KNOWLEDGE:
        fail(f"--knowledge must be one of {', '.join(KNOWLEDGE)}, not {knowledge!r}")
    try:
        day_key(date)
    except (ValueError, TypeError):
        fail(f"--date {date!r} is not a date (use YYYY-MM-DD)")
    try:
        result = qa_service(get_settings()).ask(query, date, k=k, strategy=strategy, knowledge=knowledge).as_dict()
    except NotConfigured as exc:
        fail(str(exc))
    emit(result, as_json, _render)


def _render(r: dict) -> None:
    entity = r["entity"]
    named = f"{entity['name']} ({entity['id']})" if entity else "-"
    console.print(f"[bold]{r['reformulated']}[/]  entity: {named}  strategy: {r['strategy']}  {r['latency_ms']} ms")
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


@app.command()
def serve(
    pipeline: bool = typer.Option(False, "--pipeline", help="Host the process and extract stages in this process "
                                                            "(embedded mode: local Qdrant admits one process)."),
    host: str | None = typer.Option(None, "--host"),
    port: int | None = typer.Option(None, "--port"),
) -> None:
    """The always-current QA HTTP API (/v1/ask, /v1/entities, /healthz, /readyz, /metrics, /docs)."""
    import uvicorn

    from ingest.kafka.stage import run_stages
    from newskg.pipeline import build_runners, qa_service
    from newskg.services.servers import kafka_healthy
    from newskg.wiring import kafka_bootstrap, open_mirror
    from qa.api import create_app

    settings = get_settings()
    try:
        mirror = open_mirror(settings)
        service = qa_service(settings, mirror)
    except NotConfigured as exc:
        fail(str(exc))
    mirror.embedder.embed(["warm up"])  # load the model before the first request
    readiness = {"broker": lambda: kafka_healthy(kafka_bootstrap(settings)), "graph": service.store.conn.ping,
                 "mirror": lambda: mirror.count("interactions") >= 0}
    app_ = create_app(service, readiness, settings.api_keys, settings.api_max_query_chars, settings.api_threads)
    stop, worker, runners = threading.Event(), None, []
    if pipeline:
        runners = build_runners(settings, ["process", "extract"], mirror=mirror)
        worker = threading.Thread(target=run_stages, args=(runners, False, stop), name="stages", daemon=True)
        worker.start()
    console.print(f"serving on http://{host or settings.api_host}:{port or settings.api_port} "
                  f"({'with' if pipeline else 'without'} the pipeline)")
    try:
        uvicorn.run(app_, host=host or settings.api_host, port=port or settings.api_port, log_level="warning")
    finally:
        stop.set()  # the stages finish the batch in hand and commit, then stop
        if worker:
            worker.join(timeout=60)
        for runner in runners:
            runner.close()
        mirror.close()
