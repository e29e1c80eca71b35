"""BoltConnection.console_read without a server (no Neo4j runs here): a scripted driver at the one seam records
that the statement goes to a read session with the server-side timeout, that only the cap's rows are pulled, and
that the server's refusals (Neo.ClientError.Statement.AccessMode, TransactionTimedOut) become ConsoleRefused with
the reason the API maps to 403 and 408."""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

import neo4j
import pytest
from neo4j.exceptions import Neo4jError

from newskg.graph.connection import BoltConnection
from newskg.graph.connection.base import ConsoleRefused


class Record:
    def __init__(self, values: list[object]):
        self._values = values

    def values(self) -> list[object]:
        return self._values


class Result:
    def __init__(self, rows: int, pulled: list[int]):
        self.rows, self.pulled = rows, pulled

    def keys(self) -> list[str]:
        return ["i"]

    def __iter__(self) -> Iterator[Record]:
        for i in range(self.rows):
            self.pulled.append(i)
            yield Record([i])


class Session:
    def __init__(self, driver: Driver):
        self.driver = driver

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, query: neo4j.Query, params: dict[str, object]) -> Result:
        self.driver.sent.append((query, params))
        if self.driver.refuse_with is not None:
            raise self.driver.refuse_with
        return Result(self.driver.rows, self.driver.pulled)


class Driver:
    def __init__(self, rows: int = 0, refuse_with: Exception | None = None):
        self.rows, self.refuse_with = rows, refuse_with
        self.sent: list[tuple[neo4j.Query, dict[str, object]]] = []
        self.sessions: list[dict[str, object]] = []
        self.pulled: list[int] = []

    def session(self, **config: object) -> Session:
        self.sessions.append(config)
        return Session(self)

    def close(self) -> None:
        return None


def bolt(driver: Driver) -> BoltConnection:
    return BoltConnection("neo4j://unused", "neo4j", "secret", "newskg", driver=cast(neo4j.Driver, driver))


def test_a_console_statement_runs_in_a_read_session_with_the_timeout_and_the_row_cap():
    driver = Driver(rows=10)
    result = bolt(driver).console_read("UNWIND range(1, 10) AS i RETURN i", {"x": 1}, timeout_ms=1500, max_rows=3)
    assert driver.sessions == [{"database": "newskg", "default_access_mode": neo4j.READ_ACCESS}]
    [(query, params)] = driver.sent
    assert query.text == "UNWIND range(1, 10) AS i RETURN i" and query.timeout == 1.5 and params == {"x": 1}
    assert result.columns == ["i"] and result.rows == [[0], [1], [2]] and result.truncated
    assert driver.pulled == [0, 1, 2, 3]  # one past the cap, to know there is more; not the other six


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("Neo.ClientError.Statement.AccessMode", "write_refused"),
        ("Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration", "timeout"),
        ("Neo.ClientError.Statement.SyntaxError", "invalid_query"),
    ],
)
def test_the_servers_refusals_keep_their_reason(code, reason):
    refusal = Neo4jError._hydrate_neo4j(code=code, message="refused")  # what the driver raises for the server
    with pytest.raises(ConsoleRefused) as raised:
        bolt(Driver(refuse_with=refusal)).console_read("CREATE (n)", {}, timeout_ms=100, max_rows=5)
    assert raised.value.reason == reason
