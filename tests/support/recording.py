"""Record every statement a real graph connection runs (the traced half of the Neo4j dialect proof): the query
text and the parameters exactly as the caller passed them, while the real server (FalkorDB) runs them.

It wraps the connection object itself (its `run` and `read`; `run_many` on FalkorDB runs each statement through
`run`), so `isinstance` checks and the dialect DDL path see the real FalkorConnection."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from graph.connection.base import GraphConnection, Params, Row


@dataclass(frozen=True)
class Sent:
    query: str
    params: Mapping[str, object]


@contextlib.contextmanager
def recording(conn: GraphConnection) -> Iterator[list[Sent]]:
    """Within the block, every statement `conn` runs is appended to the yielded list (after it ran without error)."""
    sent: list[Sent] = []
    run, read = conn.run, conn.read

    def recorded_run(query: str, params: Params | None = None) -> list[Row]:
        rows = run(query, params)
        sent.append(Sent(query, dict(params or {})))
        return rows

    def recorded_read(query: str, params: Params | None = None) -> list[Row]:
        rows = read(query, params)
        sent.append(Sent(query, dict(params or {})))
        return rows

    conn.run, conn.read = recorded_run, recorded_read  # the instance's own attributes shadow the class methods
    try:
        yield sent
    finally:
        del conn.run, conn.read
