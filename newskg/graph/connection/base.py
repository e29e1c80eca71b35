"""The thin connection interface the Cypher store is written against.

Both implementations run the same Cypher text with parameters (never values pasted into the query) and return
rows as dicts keyed by the RETURN column names. The values are whatever the server sent (`object`): the store
turns them into typed rows (graph/store/rows.py), so no caller reads an untyped dict.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, Self

from newskg.core.errors import NewskgError

Row = dict[str, object]
Params = Mapping[str, object]
Statement = tuple[str, Params]
Dialect = Literal["falkordb", "neo4j"]

# Deletes every node and relationship: the Cypher both dialects share (a FalkorDB graph is dropped whole).
DELETE_ALL = "MATCH (n) DETACH DELETE n"


ConsoleRefusal = Literal["write_refused", "timeout", "invalid_query"]


class ConsoleRefused(NewskgError):
    """The read-only console would not (or could not) run a statement: `reason` is one of ConsoleRefusal."""

    REASON = "invalid_query"


@dataclass(frozen=True)
class ConsoleResult:
    """A console statement's first rows, values made JSON-native (graph elements as dicts with a `kind`)."""

    columns: list[str]
    rows: list[list[object]]
    truncated: bool  # more rows than the cap: only the first ones are here


class GraphConnection(ABC):
    dialect: Dialect

    @abstractmethod
    def run(self, query: str, params: Params | None = None) -> list[Row]:
        """Run a read or write query in its own transaction; return all rows."""

    def read(self, query: str, params: Params | None = None) -> list[Row]:
        """A read-only query; servers that can route reads (replicas) do so."""
        return self.run(query, params)

    def console_read(self, query: str, params: Params, timeout_ms: int, max_rows: int) -> ConsoleResult:
        """A power user's statement, enforced read-only by the server (FalkorDB GRAPH.RO_QUERY, a Neo4j read
        transaction), stopped by the server after `timeout_ms`, at most `max_rows` rows kept. Raises
        ConsoleRefused (reason write_refused, timeout or invalid_query). A connection that cannot enforce
        read-only on the server refuses every statement."""
        raise ConsoleRefused(f"the {self.dialect} connection has no read-only console", reason="invalid_query")

    def run_many(self, statements: Iterable[Statement]) -> None:
        """Several writes as one unit where the server has transactions (Neo4j); in order otherwise (FalkorDB
        runs each query atomically), a statement only once every one before it succeeded. Every statement the
        store sends is an idempotent MERGE, so a retry of the whole unit after a failure part-way is safe.
        `statements` may be a generator: it is read once, in order (FalkorDB builds the next statement while the
        server runs the one before)."""
        for query, params in statements:
            self.run(query, params)

    def drop(self) -> None:
        """Delete every node and relationship of the graph (tests, benches, a reset)."""
        self.run(DELETE_ALL)

    @abstractmethod
    def ping(self) -> bool: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
