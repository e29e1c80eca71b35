"""Persistent LLM response cache and usage ledger (SQLite under the data dir), shared by every process."""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, prompt TEXT, version INTEGER,
                                      content TEXT NOT NULL, created_at TEXT DEFAULT CURRENT_TIMESTAMP);
CREATE TABLE IF NOT EXISTS usage (model TEXT, prompt TEXT, calls INTEGER, cached INTEGER, failures INTEGER,
                                  prompt_tokens INTEGER, completion_tokens INTEGER, cost_usd REAL,
                                  PRIMARY KEY (model, prompt));
CREATE TABLE IF NOT EXISTS counters (model TEXT, prompt TEXT, name TEXT, n INTEGER, PRIMARY KEY (model, prompt, name));
"""


class UsageRow(TypedDict):
    """One (model, prompt) line of the usage ledger."""

    model: str
    prompt: str
    calls: int
    cached: int
    failures: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


@dataclass(frozen=True)
class Tally:
    """What answers of one (model, prompt) add to its usage line: calls made, answers from the cache, unparsed
    answers, tokens, cost."""

    calls: int = 0
    cached: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


class CounterRow(TypedDict):
    """One outcome counter of a prompt's answers (LLMClient.count)."""

    model: str
    prompt: str
    name: str
    n: int


class LLMCache:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self._db.executescript(SCHEMA)
        self._lock = threading.Lock()

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT content FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, model: str, prompt: str, version: int, content: str) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO responses (key, model, prompt, version, content) VALUES (?, ?, ?, ?, ?)",
                (key, model, prompt, version, content),
            )

    def record(self, model: str, prompt: str, tally: Tally) -> None:
        """Add `tally` to the (model, prompt) line of the usage ledger."""
        t = tally
        with self._lock:
            self._db.execute(
                "INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (model, prompt) DO UPDATE SET "
                "calls = calls + excluded.calls, cached = cached + excluded.cached, "
                "failures = failures + excluded.failures, prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
                "completion_tokens = completion_tokens + excluded.completion_tokens, "
                "cost_usd = cost_usd + excluded.cost_usd",
                (model, prompt, t.calls, t.cached, t.failures, t.prompt_tokens, t.completion_tokens, t.cost_usd),
            )

    def count(self, model: str, prompt: str, name: str, n: int = 1) -> None:
        """An outcome of a prompt's answers (e.g. M2 lines dropped for citing no valid chunk), summed per name."""
        with self._lock:
            self._db.execute(
                "INSERT INTO counters VALUES (?, ?, ?, ?) ON CONFLICT (model, prompt, name) DO UPDATE "
                "SET n = n + excluded.n",
                (model, prompt, name, n),
            )

    def counters(self) -> list[CounterRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT model, prompt, name, n FROM counters ORDER BY model, prompt, name"
            ).fetchall()
        return [CounterRow(model=m, prompt=p, name=name, n=n) for m, p, name, n in rows]

    def usage(self) -> list[UsageRow]:
        with self._lock:
            rows = self._db.execute(
                "SELECT model, prompt, calls, cached, failures, prompt_tokens, completion_tokens, cost_usd "
                "FROM usage ORDER BY model, prompt"
            ).fetchall()
        return [
            UsageRow(
                model=m,
                prompt=p,
                calls=calls,
                cached=cached,
                failures=failures,
                prompt_tokens=tokens_in,
                completion_tokens=tokens_out,
                cost_usd=cost,
            )
            for m, p, calls, cached, failures, tokens_in, tokens_out, cost in rows
        ]

    def close(self) -> None:
        self._db.close()
