"""Neo4j 5 (and Aura, clusters) over Bolt with the official `neo4j` driver: the production connection.

`run` and `read` are auto-commit transactions, retried here on transient errors (the driver retries only managed
transactions): every write the store sends is an idempotent MERGE, so a retry after an unknown outcome is safe,
and auto-commit is what `CALL {…} IN TRANSACTIONS` needs. (It is also the only form FalkorDB's experimental Bolt
endpoint survives, which the smoke test uses.) `run_many`, the production write path, is one managed transaction
(`execute_write`), which the driver itself retries on transient errors within `max_transaction_retry_time`: it
is not wrapped in a second retry, which would multiply the attempts and the wait.

The driver is typed except for its `**config` keyword arguments (unannotated in the driver); the three calls
that take them carry a narrow ignore, here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import LiteralString, cast

import neo4j
from neo4j.exceptions import ClientError, Neo4jError, ServiceUnavailable, SessionExpired, TransientError
from neo4j.graph import Node, Path, Relationship
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from newskg.graph.connection.base import ConsoleRefused, ConsoleResult, GraphConnection, Params, Row, Statement

_retry = retry(
    retry=retry_if_exception_type((TransientError, SessionExpired, ServiceUnavailable)),
    wait=wait_exponential(multiplier=0.2, max=5),
    stop=stop_after_attempt(5),
    reraise=True,
)


def _query(text: str) -> LiteralString:
    # The driver asks for LiteralString to keep values out of query text. Ours is always the store's own Cypher
    # (module constants and fixed labels) with values passed as parameters, but built with f-strings.
    return cast(LiteralString, text)


class BoltConnection(GraphConnection):
    dialect = "neo4j"

    def __init__(
        self, uri: str, user: str | None, password: str | None, database: str | None, driver: neo4j.Driver | None = None
    ):
        """`driver`: an already made driver (the unit tests pass a scripted one to see what would be sent)."""
        auth = (user, password or "") if user else None
        self._driver = driver or neo4j.GraphDatabase.driver(uri, auth=auth)  # pyright: ignore[reportUnknownMemberType] (**config unannotated)
        self.database = database

    def _session(self, access: str) -> neo4j.Session:
        return self._driver.session(database=self.database, default_access_mode=access)  # pyright: ignore[reportUnknownMemberType] (**config unannotated)

    @_retry
    def _run(self, query: str, params: Params | None, access: str) -> list[Row]:
        with self._session(access) as session:
            return session.run(_query(query), dict(params or {})).data()

    def run(self, query: str, params: Params | None = None) -> list[Row]:
        return self._run(query, params, neo4j.WRITE_ACCESS)

    def read(self, query: str, params: Params | None = None) -> list[Row]:
        return self._run(query, params, neo4j.READ_ACCESS)

    def console_read(self, query: str, params: Params, timeout_ms: int, max_rows: int) -> ConsoleResult:
        """A read transaction (the server refuses a write in it: Neo.ClientError.Statement.AccessMode) with the
        server's transaction timeout; only the first rows are pulled from the server."""
        statement = neo4j.Query(_query(query), timeout=timeout_ms / 1000)
        try:
            with self._session(neo4j.READ_ACCESS) as session:
                result = session.run(statement, dict(params))
                columns = list(result.keys())
                rows: list[list[object]] = []
                truncated = False
                for record in result:
                    if len(rows) == max_rows:
                        truncated = True
                        break
                    rows.append([_plain(value) for value in record.values()])
                return ConsoleResult(columns, rows, truncated)
        except Neo4jError as exc:
            raise ConsoleRefused(str(exc), reason=_refusal(exc)) from exc

    def run_many(self, statements: Iterable[Statement]) -> None:
        """All statements in one transaction, in order (the driver retries the whole of it on transient errors)."""
        statements = list(statements)  # a retry runs them again

        def work(tx: neo4j.ManagedTransaction) -> None:
            for query, params in statements:
                tx.run(_query(query), dict(params)).consume()

        with self._session(neo4j.WRITE_ACCESS) as session:
            session.execute_write(work)

    def ping(self) -> bool:
        self._driver.verify_connectivity()  # pyright: ignore[reportUnknownMemberType] (**config unannotated)
        return True

    def close(self) -> None:
        self._driver.close()


def _refusal(exc: Neo4jError) -> str:
    code = exc.code or ""
    if code.endswith("Statement.AccessMode") or (isinstance(exc, ClientError) and "access mode" in str(exc).lower()):
        return "write_refused"
    if "TransactionTimedOut" in code or "timed out" in str(exc).lower():
        return "timeout"
    return "invalid_query"


def _plain(value: object) -> object:
    """A record value as JSON-native data; nodes, relationships and paths as dicts the explorer can draw."""
    if isinstance(value, Node):
        return {"kind": "node", "id": value.element_id, "labels": sorted(value.labels), "properties": dict(value)}
    if isinstance(value, Relationship):
        start, end = value.start_node, value.end_node
        return {
            "kind": "relationship",
            "id": value.element_id,
            "type": value.type,
            "start": start.element_id if start else None,
            "end": end.element_id if end else None,
            "properties": dict(value),
        }
    if isinstance(value, Path):
        return {
            "kind": "path",
            "nodes": [_plain(n) for n in value.nodes],
            "edges": [_plain(r) for r in value.relationships],
        }
    if isinstance(value, list):
        return [_plain(v) for v in value]  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType] (record values are untyped)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType] (untyped maps)
    return value
