"""FalkorDB over its native protocol (RESP) with the official `falkordb` client: the embedded default.

The client sends parameters in the query's CYPHER header with its own quoting, so values are never part of the
query text we write.
"""

from __future__ import annotations

from typing import Any

from falkordb import FalkorDB

from graph.connection.base import GraphConnection, Row


class FalkorConnection(GraphConnection):
    dialect = "falkordb"

    def __init__(
        self,
        host: str,
        port: int,
        graph: str,
        password: str | None = None,
        username: str | None = None,
        timeout_s: float = 60.0,
    ):
        self._db = FalkorDB(
            host=host,
            port=port,
            password=password,
            username=username,
            socket_timeout=timeout_s,
            socket_connect_timeout=5,
        )
        self.graph_name = graph
        self._graph = self._db.select_graph(graph)

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        result = self._graph.query(query, params or None)
        return _rows(result)

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        return _rows(self._graph.ro_query(query, params or None))

    def ping(self) -> bool:
        return bool(self._db.connection.ping())

    def execute_command(self, *args: Any) -> Any:
        """Raw server command, for the dialect's DDL (GRAPH.CONSTRAINT) only."""
        return self._db.connection.execute_command(*args)

    def drop(self) -> None:
        """Delete the whole graph (tests)."""
        try:
            self._graph.delete()
        except Exception as exc:
            if "empty key" not in str(exc).lower() and "invalid graph" not in str(exc).lower():
                raise

    def close(self) -> None:
        self._db.connection.close()


def _rows(result) -> list[Row]:
    if not result.header:
        return []
    names = [column[1] if isinstance(column, (list, tuple)) else column for column in result.header]
    names = [n.decode() if isinstance(n, bytes) else n for n in names]
    return [dict(zip(names, row, strict=True)) for row in result.result_set]
