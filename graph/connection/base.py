"""The thin connection interface the Cypher store is written against.

Both implementations run the same Cypher text with parameters (never values pasted into the query) and return
rows as dicts keyed by the RETURN column names. The values are whatever the server sent (`object`): the store
turns them into typed rows (graph/store/rows.py), so no caller reads an untyped dict.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Literal, Self

Row = dict[str, object]
Params = Mapping[str, object]
Statement = tuple[str, Params]
Dialect = Literal["falkordb", "neo4j"]

# Deletes every node and relationship: the Cypher both dialects share (a FalkorDB graph is dropped whole).
DELETE_ALL = "MATCH (n) DETACH DELETE n"


class GraphConnection(ABC):
    dialect: Dialect

    @abstractmethod
    def run(self, query: str, params: Params | None = None) -> list[Row]:
        """Run a read or write query in its own transaction; return all rows."""

    def read(self, query: str, params: Params | None = None) -> list[Row]:
        """A read-only query; servers that can route reads (replicas) do so."""
        return self.run(query, params)

    def run_many(self, statements: Sequence[Statement]) -> None:
        """Several writes as one unit where the server has transactions (Neo4j); in order otherwise (FalkorDB
        runs each query atomically). Every statement the store sends is an idempotent MERGE, so a retry of the
        whole unit after a failure part-way is safe."""
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
