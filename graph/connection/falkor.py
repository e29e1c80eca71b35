"""FalkorDB over its native protocol (RESP) with the official `falkordb` client: the embedded default.

The client sends parameters in the query's CYPHER header with its own quoting, so values are never part of the
query text we write. The client has no type information: `typings/falkordb` declares the part used here."""

from __future__ import annotations

from falkordb import FalkorDB, QueryResult

from graph.connection.base import GraphConnection, Params, Row


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

    def run(self, query: str, params: Params | None = None) -> list[Row]:
        return _rows(self._graph.query(query, params or None))

    def read(self, query: str, params: Params | None = None) -> list[Row]:
        return _rows(self._graph.ro_query(query, params or None))

    def ping(self) -> bool:
        return bool(self._db.connection.ping())

    def execute_command(self, *args: str) -> object:
        """Raw server command, for the dialect's DDL (GRAPH.CONSTRAINT) only."""
        return self._db.connection.execute_command(*args)

    def drop(self) -> None:
        """Delete the whole graph (tests, benches, a reset): faster than deleting its nodes, and its indexes go too."""
        try:
            self._graph.delete()
        except Exception as exc:
            if "empty key" not in str(exc).lower() and "invalid graph" not in str(exc).lower():
                raise

    def close(self) -> None:
        self._db.connection.close()


def _column_name(column: list[object]) -> str:
    """A header entry is [column type, name]; the name may come as bytes."""
    name = column[1]
    return name.decode() if isinstance(name, bytes) else str(name)


def _rows(result: QueryResult) -> list[Row]:
    if not result.header:
        return []
    names = [_column_name(column) for column in result.header]
    return [dict(zip(names, row, strict=True)) for row in result.result_set]
