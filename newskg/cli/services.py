"""`newskg services up|down|status`."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.settings import get_settings
from newskg.extras import MissingExtra
from newskg.services.manager import ServiceError, ServiceManager, ServiceStatus

app = typer.Typer(help="Start, check and stop the local servers (broker, graph, LLM).", no_args_is_help=True)

ONLY = typer.Option(None, "--only", help="Only this server: broker, graph or llm (repeatable).")


def _render(statuses: list[dict[str, Any]]) -> None:
    table = Table(title="newskg services")
    for column in ("name", "engine", "address", "mode", "running", "healthy", "pid"):
        table.add_column(column, overflow="fold")
    for s in statuses:
        health = "[green]yes[/]" if s["healthy"] else "[red]no[/]"
        table.add_row(
            s["name"],
            s["engine"],
            s["address"],
            s["mode"],
            "yes" if s["running"] else "no",
            health,
            str(s["pid"] or "-"),
        )
    console.print(table)


def _report(statuses: list[ServiceStatus], as_json: bool) -> None:
    data = [s.as_dict() for s in statuses]
    emit({"services": data} if as_json else data, as_json, _render)


@app.command()
def up(
    llm: bool = typer.Option(False, "--llm", help="Also start the llama.cpp server with SmolLM2."),
    bolt: bool = typer.Option(False, "--bolt", help="Open FalkorDB's Bolt port (small smoke tests only)."),
    only: list[str] = ONLY,
    as_json: bool = JsonOption,
) -> None:
    """Start what is not running yet (idempotent) and wait until it is healthy."""
    manager = ServiceManager(get_settings())
    try:
        with console.status("starting servers…"):
            statuses = manager.up(llm=llm, bolt=bolt, only=set(only) if only else None)
    except (ServiceError, MissingExtra) as exc:
        fail(str(exc))
    _report(statuses, as_json)


@app.command()
def down(only: list[str] = ONLY, as_json: bool = JsonOption) -> None:
    """Stop the servers `up` started (external servers are never touched); data stays on disk."""
    _report(ServiceManager(get_settings()).down(only=set(only) if only else None), as_json)


@app.command()
def status(as_json: bool = JsonOption) -> None:
    """Each server's address and health. Exit code 1 when a needed server is unhealthy."""
    statuses = ServiceManager(get_settings()).status()
    _report(statuses, as_json)
    needed = [s for s in statuses if s.name in ("broker", "graph", "mirror")]
    if not all(s.healthy for s in needed):
        raise typer.Exit(1)
