"""Neo4j 5 (and Aura, clusters) over Bolt with the official `neo4j` driver: the production connection.

Statements run as auto-commit transactions retried on transient errors: every write the store sends is an
idempotent MERGE, so a retry after an unknown outcome is safe, and auto-commit is what `CALL {…} IN TRANSACTIONS`
needs. (It is also the only form FalkorDB's experimental Bolt endpoint survives, which the smoke test uses.)
"""

from __future__ import annotations

from typing import Any

import neo4j
from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_exponential

from graph.connection.base import GraphConnection, Row

_retry = retry(
    retry=retry_if_exception_type((TransientError, SessionExpired, ServiceUnavailable)),
    wait=wait_exponential(multiplier=0.2, max=5),
    stop=stop_after_attempt(5),
    reraise=True,
)


class BoltConnection(GraphConnection):
    dialect = "neo4j"

    def __init__(self, uri: str, user: str | None, password: str | None, database: str | None):
        auth = (user, password or "") if user else None
        self._driver = neo4j.GraphDatabase.driver(uri, auth=auth)
        self.database = database

    @_retry
    def _run(self, query: str, params: dict[str, Any] | None, access: str) -> list[Row]:
        with self._driver.session(database=self.database, default_access_mode=access) as session:
            return session.run(query, params or {}).data()

    def run(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        return self._run(query, params, neo4j.WRITE_ACCESS)

    def read(self, query: str, params: dict[str, Any] | None = None) -> list[Row]:
        return self._run(query, params, neo4j.READ_ACCESS)

    @_retry
    def run_many(self, statements: list[tuple[str, dict[str, Any]]]) -> None:
        def work(tx) -> None:
            for query, params in statements:
                tx.run(query, params).consume()

        with self._driver.session(database=self.database) as session:
            session.execute_write(work)

    def ping(self) -> bool:
        self._driver.verify_connectivity()
        return True

    def close(self) -> None:
        self._driver.close()
