"""`newskg graph init|stats` (the rest of the graph commands land with the Graph issue)."""

from __future__ import annotations

from core.settings import get_settings
from newskg.cli.app import graph_app
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.wiring import NotConfigured, open_graph


def _store():
    from graph.store.store import GraphStore

    try:
        return GraphStore(open_graph(get_settings()))
    except NotConfigured as exc:
        fail(str(exc))


@graph_app.command("init")
def graph_init(as_json: bool = JsonOption) -> None:
    """Create the indexes and uniqueness constraints of the configured server (idempotent)."""
    store = _store()
    created = store.init()
    emit({"dialect": store.conn.dialect, "created": created}, as_json,
         lambda d: console.print(f"{d['dialect']}: {len(d['created'])} schema statements applied"))


@graph_app.command("stats")
def graph_stats(as_json: bool = JsonOption) -> None:
    """Node counts of the graph."""
    emit(_store().counts(), as_json, lambda d: console.print(d))
