"""Record every statement a real graph connection runs (the traced half of the Neo4j dialect proof): the query
text and the parameters exactly as the caller passed them, while the real server (FalkorDB) runs them.

It wraps the connection object itself (its `run`, `read` and `run_many`), so `isinstance` checks and the dialect DDL
path see the real FalkorConnection."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from newskg.graph.connection.base import GraphConnection, Params, Row, Statement


@dataclass(frozen=True)
class Sent:
    query: str
    params: Mapping[str, object]


@contextlib.contextmanager
def recording(conn: GraphConnection) -> Iterator[list[Sent]]:
    """Within the block, every statement `conn` runs is appended to the yielded list (after it ran without error)."""
    sent: list[Sent] = []
    run, read, run_many = conn.run, conn.read, conn.run_many

    def recorded_run(query: str, params: Params | None = None) -> list[Row]:
        rows = run(query, params)
        sent.append(Sent(query, dict(params or {})))
        return rows

    def recorded_read(query: str, params: Params | None = None) -> list[Row]:
        rows = read(query, params)
        sent.append(Sent(query, dict(params or {})))
        return rows

    def recorded_run_many(statements: Iterable[Statement]) -> None:
        passed: list[Statement] = []

        def passing() -> Iterator[Statement]:  # read once, as the connection reads it (a generator stays lazy)
            for statement in statements:
                passed.append(statement)
                yield statement

        run_many(passing())
        sent.extend(Sent(query, dict(params)) for query, params in passed)

    # the instance's own attributes shadow the class methods
    conn.run, conn.read, conn.run_many = recorded_run, recorded_read, recorded_run_many
    try:
        yield sent
    finally:
        del conn.run, conn.read, conn.run_many
