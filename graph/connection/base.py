"""The thin connection interface the Cypher store is written against.

Both implementations run the same Cypher text with parameters (never values pasted into the query) and return
rows as dicts keyed by the RETURN column names.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Literal, Self

Row = dict[str, Any]
Dialect = Literal["falkordb", "neo4j"]


class GraphConnection(ABC):
    dialect: Dialect

    @abstractmethod
    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        """Run a read or write query in its own transaction; return all rows."""

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        """A read-only query; servers that can route reads (replicas) do so."""
        return self.run(query, params)

    def run_many(self, statements: list[tuple[str, dict[str, Any]]]) -> None:
        """Several writes as one unit where the server has transactions (Neo4j); in order otherwise (FalkorDB
        runs each query atomically). Every statement the store sends is an idempotent MERGE, so a retry of the
        whole unit after a failure part-way is safe."""
        for query, params in statements:
            self.run(query, params)

    @abstractmethod
    def ping(self) -> bool: ...

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
