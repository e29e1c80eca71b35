"""A scripted stand-in for the part of neo4j.Driver that BoltConnection uses, at its one seam (the `driver`
argument): it records what the real driver would be given, so the write path is tested without a server (unit
tests only; integration tests talk to real servers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import neo4j

from newskg.graph.connection import BoltConnection


class ScriptedResult:
    def __init__(self, rows: list[dict[str, object]]):
        self.rows = rows

    def consume(self) -> None:
        return None

    def data(self) -> list[dict[str, object]]:
        return self.rows


class ScriptedTx:
    def __init__(self, sent: list[tuple[str, dict[str, object]]]):
        self.sent = sent

    def run(self, query: str, params: dict[str, object]) -> ScriptedResult:
        self.sent.append((query, params))
        return ScriptedResult([])


class ScriptedSession:
    def __init__(self, driver: ScriptedDriver):
        self.driver = driver

    def __enter__(self) -> ScriptedSession:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def run(self, query: str, params: dict[str, object]) -> ScriptedResult:
        """An auto-commit transaction (BoltConnection.run and read)."""
        self.driver.autocommitted.append((query, params))
        return ScriptedResult([])

    def execute_write(self, work: Callable[[ScriptedTx], None]) -> None:
        self.driver.transactions += 1
        if self.driver.fail_with is not None:
            raise self.driver.fail_with
        sent: list[tuple[str, dict[str, object]]] = []
        work(ScriptedTx(sent))
        self.driver.committed.append(sent)


class ScriptedDriver:
    """The part of neo4j.Driver BoltConnection uses; every managed transaction's statements, as committed."""

    def __init__(self, fail_with: Exception | None = None):
        self.fail_with = fail_with
        self.transactions = 0
        self.committed: list[list[tuple[str, dict[str, object]]]] = []
        self.autocommitted: list[tuple[str, dict[str, object]]] = []
        self.sessions: list[dict[str, object]] = []

    def session(self, **config: object) -> ScriptedSession:
        self.sessions.append(config)
        return ScriptedSession(self)

    def close(self) -> None:
        return None


def bolt(driver: ScriptedDriver) -> BoltConnection:
    return BoltConnection("neo4j://unused", "neo4j", "secret", "newskg", driver=cast(neo4j.Driver, driver))
