# The part of the `falkordb` client (no type information of its own) that graph/connection/falkor.py uses.
from collections.abc import Mapping

class Node:
    id: int
    labels: list[str] | None
    properties: dict[str, object]

class Edge:
    id: int
    relation: str
    src_node: int | Node
    dest_node: int | Node
    properties: dict[str, object]

class Path:
    def nodes(self) -> list[Node]: ...
    def edges(self) -> list[Edge]: ...

class QueryResult:
    header: list[list[object]]  # [column type, column name] per column
    result_set: list[list[object]]

class Graph:
    def query(self, q: str, params: Mapping[str, object] | None = None) -> QueryResult: ...
    def ro_query(
        self, q: str, params: Mapping[str, object] | None = None, timeout: int | None = None
    ) -> QueryResult: ...
    def delete(self) -> None: ...

class Connection:
    def ping(self) -> bool: ...
    def execute_command(self, *args: str) -> object: ...
    def close(self) -> None: ...

class FalkorDB:
    connection: Connection
    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        password: str | None = None,
        socket_timeout: float | None = None,
        socket_connect_timeout: float | None = None,
        username: str | None = None,
    ) -> None: ...
    def select_graph(self, graph_id: str) -> Graph: ...
