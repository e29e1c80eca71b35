"""`newskg graph init | stats | reconcile | timeline | export`."""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast, overload

import typer
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.settings import get_settings
from newskg.wiring import NotConfigured, Wiring

if TYPE_CHECKING:
    from newskg.graph.mirror.base import VectorMirror
    from newskg.graph.store.store import GraphStore


app = typer.Typer(
    help="The Cypher store and its Qdrant mirror: init, stats, reconcile, timelines.", no_args_is_help=True
)


def _store(wiring: Wiring) -> GraphStore:
    """A store over the bundle's graph connection (no schema statements: reads and `init` say when)."""
    try:
        return wiring.store(ensure_schema=False)
    except NotConfigured as exc:
        fail(str(exc))


def _mirror(wiring: Wiring) -> VectorMirror:
    try:
        return wiring.mirror()
    except NotConfigured as exc:
        fail(str(exc))


@overload
def _day(value: str, option: str) -> int: ...
@overload
def _day(value: str | None, option: str) -> int | None: ...
def _day(value: str | None, option: str) -> int | None:
    from newskg.core.timeaxes import day_key

    if value is None:
        return None
    try:
        return day_key(value)
    except (ValueError, TypeError):
        fail(f"{option} {value!r} is not a date (use YYYY-MM-DD)")


@app.command("init")
def graph_init(
    print_ddl: bool = typer.Option(
        False, "--print-ddl", help="Print the schema statements instead of running them (no server is contacted)."
    ),
    dialect: str | None = typer.Option(
        None,
        "--dialect",
        help="With --print-ddl: neo4j or falkordb (default: the dialect of NEWSKG_GRAPH_URI, else falkordb).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Create the indexes and uniqueness constraints of the configured server (idempotent), or print them."""
    if print_ddl:
        _print_ddl(dialect)
        return
    if dialect is not None:
        fail("--dialect goes with --print-ddl (init uses the configured server's own dialect)")
    with Wiring(get_settings()) as wiring:
        store = _store(wiring)
        created = store.init()
    emit(
        {"dialect": store.conn.dialect, "created": created},
        as_json,
        lambda d: console.print(f"{d['dialect']}: {len(d['created'])} schema statements applied"),
    )


def _print_ddl(dialect: str | None) -> None:
    from newskg.graph.connection import DEFAULT_FALKOR_GRAPH, dialect_of
    from newskg.graph.store.schema import ddl_script

    settings = get_settings()
    chosen = dialect or (dialect_of(settings.graph_uri) if settings.graph_uri else "falkordb")
    if chosen != "neo4j" and chosen != "falkordb":
        fail(f"--dialect {chosen!r}: use neo4j or falkordb")
    sys.stdout.write(ddl_script(chosen, settings.graph_database or DEFAULT_FALKOR_GRAPH))


@app.command("stats")
def graph_stats(as_json: bool = JsonOption) -> None:
    """Counts of the graph and of its Qdrant mirror."""
    from newskg.graph.mirror.base import CHUNKS, INTERACTIONS

    with Wiring(get_settings()) as wiring:
        data: dict[str, Any] = _store(wiring).counts()
        mirror = _mirror(wiring)
        data["mirror"] = {"interactions": mirror.count(INTERACTIONS), "chunks": mirror.count(CHUNKS)}
    emit(data, as_json, lambda d: console.print(d))


@app.command("reconcile")
def graph_reconcile(as_json: bool = JsonOption) -> None:
    """Compare graph and mirror ids and payload times and repair either side (the graph is the source of truth;
    points written after the scan began are never deleted)."""
    from newskg.graph.mirror.reconcile import reconcile

    with Wiring(get_settings()) as wiring, console.status("reconciling graph and mirror…"):
        reports = [r.as_dict() for r in reconcile(_store(wiring), _mirror(wiring))]
    emit({"collections": reports}, as_json, lambda d: _table(d["collections"], "reconcile"))


AS_OF = typer.Option(
    None, "--as-of", help="The graph as it stood at the end of this day, YYYY-MM-DD (default: as it stands now)."
)


@app.command("entities")
def graph_entities(
    top: int = typer.Option(10, "--top", min=1, max=1000), as_of: str | None = AS_OF, as_json: bool = JsonOption
) -> None:
    """The entities with the most interactions as of the day, with their first and last event days."""
    as_of_day = _day(as_of, "--as-of")
    with Wiring(get_settings()) as wiring:
        rows = [asdict(r) for r in _store(wiring).top_entities(top, as_of_day)]
    emit({"as_of": as_of, "entities": rows}, as_json, lambda d: _table(d["entities"], "most connected entities"))


@app.command("timeline")
def graph_timeline(
    entity: str = typer.Argument(..., help="Entity id, name or alias."),
    from_day: str = typer.Option(..., "--from", help="First event day, YYYY-MM-DD."),
    to_day: str = typer.Option(..., "--to", help="Last event day, YYYY-MM-DD."),
    as_of: str | None = AS_OF,
    limit: int = typer.Option(200, "--limit", min=1, max=10000),
    as_json: bool = JsonOption,
) -> None:
    """The entity's interactions in a window of event days, with their sources (n_sources), as of the day; over
    --limit, the ones nearest the as-of day are kept."""
    as_of_day, first, last = _day(as_of, "--as-of"), _day(from_day, "--from"), _day(to_day, "--to")
    with Wiring(get_settings()) as wiring:
        store = _store(wiring)
        matches = [asdict(r) for r in store.find_entities(entity, limit=5, as_of=as_of_day)]
        if not matches:
            fail(f"no entity matches {entity!r}" + (f" as of {as_of}" if as_of else ""))
        chosen = matches[0]
        rows = [asdict(r) for r in store.timeline(chosen["id"], first, last, as_of_day, limit)]
    data = {"entity": chosen, "candidates": matches[1:], "as_of": as_of, "interactions": rows}
    emit(
        data,
        as_json,
        lambda d: _table(
            d["interactions"],
            f"{chosen['name']} ({chosen['id']})",
            ("event_iso", "text", "n_sources", "sources", "variant", "confidence"),
        ),
    )


@app.command("export")
def graph_export(
    fmt: str = typer.Option("jsonl", "--format", help="jsonl: one node or relationship per line."),
    out: Path | None = typer.Option(None, "--out", help="File to write (default: standard output)."),
    as_of: str | None = typer.Option(
        None,
        "--as-of",
        help="Only what the graph held at the end of this day, YYYY-MM-DD (default: the whole graph, a backup).",
    ),
) -> None:
    """Every node and relationship, for backups and other tools; with --as-of, the graph as of that day."""
    from newskg.graph.store.export import export_jsonl

    if fmt != "jsonl":
        fail(f"unknown format {fmt!r}: only jsonl")
    as_of_day = _day(as_of, "--as-of")
    with Wiring(get_settings()) as wiring:
        store = _store(wiring)
        stream = wiring.own(out.open("w", encoding="utf-8")) if out else sys.stdout
        lines = export_jsonl(store, lambda item: stream.write(json.dumps(item, ensure_ascii=False) + "\n"), as_of_day)
    if out:
        console.print(f"wrote {lines} lines to {out}")


def _table(rows: list[dict[str, Any]], title: str, columns: tuple[str, ...] | None = None) -> None:
    table = Table(title=title)
    columns = columns or (tuple(rows[0]) if rows else ())  # named columns head even an empty table
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(
            *(
                ", ".join(map(str, cast("list[object]", v)))  # a JSON list: its items are printed with str
                if isinstance(v, list)
                else str(v)
                for v in (row.get(c) for c in columns)
            )
        )
    console.print(table)
