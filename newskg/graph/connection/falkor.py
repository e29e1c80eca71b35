"""FalkorDB over its native protocol (RESP) with the official `falkordb` client: the embedded default.

The client sends parameters in the query's CYPHER header with its own quoting, so values are never part of the
query text we write. The client has no type information: `typings/falkordb` declares the part used here."""

from __future__ import annotations

import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Protocol, cast

import redis
from falkordb import Edge, FalkorDB, Node, Path, QueryResult
from falkordb.helpers import stringify_param_value

from newskg.graph.connection.base import ConsoleRefused, ConsoleResult, GraphConnection, Params, Row, Statement


class RedisCommands(Protocol):
    """A redis-py client or the falkordb client's connection (which is one)."""

    def execute_command(self, *args: str) -> object: ...


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
        # run_many's pipeline: one writer thread, so the statements reach the server in order
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"falkordb-{graph}")

    def run(self, query: str, params: Params | None = None) -> list[Row]:
        return _rows(self._graph.query(query, params or None))

    def read(self, query: str, params: Params | None = None) -> list[Row]:
        return _rows(self._graph.ro_query(query, params or None))

    def run_many(self, statements: Iterable[Statement]) -> None:
        """In order, each statement only once every one before it succeeded (the first failure is raised and
        stops the rest, as GraphConnection.run_many), but pipelined: while the server runs one statement, this
        thread builds the next one's rows (the caller's generator) and encodes its parameters into the CYPHER
        header, which is client CPU of about a third of a batch's time; one writer thread sends them in turn."""
        writer = self._writer
        pending: Future[None] | None = None
        try:
            for query, params in statements:
                pending = writer.submit(self._write_after, pending, _with_params(query, params))
        except BaseException:
            if pending is not None:
                wait([pending])  # what was sent has run (or stopped) before the caller sees the error
            raise
        if pending is not None:
            pending.result()

    def _write_after(self, previous: Future[None] | None, query: str) -> None:
        if previous is not None:
            previous.result()  # a failure before this statement is its failure too: it is not sent
        reply = self._db.connection.execute_command("GRAPH.QUERY", self.graph_name, query, "--compact")
        # A run-time error comes as the reply's last element (as the client's QueryResult checks).
        if isinstance(reply, list) and reply and isinstance(reply[-1], redis.ResponseError):
            raise reply[-1]

    def console_read(self, query: str, params: Params, timeout_ms: int, max_rows: int) -> ConsoleResult:
        """GRAPH.RO_QUERY with the server's own per-query timeout: the server refuses any write."""
        try:
            result = self._graph.ro_query(query, params or None, timeout=timeout_ms)
        except Exception as exc:
            raise ConsoleRefused(str(exc), reason=_refusal(str(exc))) from exc
        columns = [_column_name(column) for column in result.header] if result.header else []
        rows = result.result_set[: max_rows + 1] if result.header else []
        return ConsoleResult(
            columns, [[_plain(value) for value in row] for row in rows[:max_rows]], truncated=len(rows) > max_rows
        )

    def ping(self) -> bool:
        return bool(self._db.connection.ping())

    def execute_command(self, *args: str) -> object:
        """Raw server command, for the dialect's DDL (GRAPH.CONSTRAINT) and the AOF's upkeep only."""
        return self._db.connection.execute_command(*args)

    def drop(self) -> None:
        """Delete the whole graph (tests, benches, a reset): faster than deleting its nodes, and its indexes go too."""
        try:
            self._graph.delete()
        except Exception as exc:
            if "empty key" not in str(exc).lower() and "invalid graph" not in str(exc).lower():
                raise

    def close(self) -> None:
        self._writer.shutdown(wait=True)
        self._db.connection.close()

    def compact_aof(self, timeout_s: float = 120.0) -> bool:
        """`compact_aof` on this connection's server."""
        return compact_aof(self._db.connection, timeout_s)


def compact_aof(client: RedisCommands, timeout_s: float = 120.0) -> bool:
    """Rewrite the server's AOF into an RDB base (BGREWRITEAOF) and wait for it: a restart then loads the graph and
    its indexes from the base instead of replaying every write. True once done; False when the AOF is off, the
    server refuses or does not answer (ACLs, a busy server) or the rewrite outlasts `timeout_s` (it goes on in the
    background). Applies to the whole server, every graph on it."""
    deadline = time.monotonic() + timeout_s
    try:
        if _persistence(client).get("aof_enabled") != 1:
            return False
        while True:
            try:
                client.execute_command("BGREWRITEAOF")
                break
            except redis.ResponseError as exc:
                # One already running may have forked before our last write: let it end, then ask for ours.
                if "already in progress" not in str(exc).lower() or not _aof_rewrite_done(client, deadline):
                    raise
        return _aof_rewrite_done(client, deadline)
    except (redis.RedisError, OSError):
        return False


def _aof_rewrite_done(client: RedisCommands, deadline: float) -> bool:
    """True once no AOF rewrite runs or waits to run; False at the deadline."""
    while time.monotonic() < deadline:
        info = _persistence(client)
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            return True
        time.sleep(0.05)
    return False


def _persistence(client: RedisCommands) -> dict[str, object]:
    info = client.execute_command("INFO", "persistence")
    # redis-py parses INFO into a dict of its own making (untyped)
    return {str(k): v for k, v in cast("dict[object, object]", info).items()} if isinstance(info, dict) else {}


def _with_params(query: str, params: Params) -> str:
    """The query with its parameters in the CYPHER header, as the client's Graph.query sends it."""
    if not params:
        return query
    return "CYPHER " + "".join(f"`{name}`={stringify_param_value(value)} " for name, value in params.items()) + query


def _column_name(column: list[object]) -> str:
    """A header entry is [column type, name]; the name may come as bytes."""
    name = column[1]
    return name.decode() if isinstance(name, bytes) else str(name)


def _rows(result: QueryResult) -> list[Row]:
    if not result.header:
        return []
    names = [_column_name(column) for column in result.header]
    return [dict(zip(names, row, strict=True)) for row in result.result_set]


def _refusal(message: str) -> str:
    """FalkorDB's error texts: "graph.RO_QUERY is to be executed only on read-only queries", "Query timed out"."""
    lowered = message.lower()
    if "read-only" in lowered or "read only" in lowered:
        return "write_refused"
    if "timed out" in lowered or "timeout" in lowered:
        return "timeout"
    return "invalid_query"


def _node_id(node: int | Node) -> int:
    return node if isinstance(node, int) else node.id


def _plain(value: object) -> object:
    """A result value as JSON-native data; nodes, relationships and paths as dicts the explorer can draw."""
    if isinstance(value, Node):
        return {"kind": "node", "id": str(value.id), "labels": value.labels or [], "properties": value.properties}
    if isinstance(value, Edge):
        return {
            "kind": "relationship",
            "id": str(value.id),
            "type": value.relation,
            "start": str(_node_id(value.src_node)),
            "end": str(_node_id(value.dest_node)),
            "properties": value.properties,
        }
    if isinstance(value, Path):
        return {
            "kind": "path",
            "nodes": [_plain(n) for n in value.nodes()],
            "edges": [_plain(e) for e in value.edges()],
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType] (the client's lists are untyped)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType] (untyped maps)
    return value
