"""Query logs (`timestamp, query[, user_id][, count]`, CSV with a header or JSONL), read in one streaming pass.

The pass keeps, per normalised query, at most `min_users` distinct user ids (a query reaching that many is marked
as passing and its ids are forgotten) and, per (normalised query, day), the summed count: memory grows with the
distinct queries and query-days, never with the lines. At the end, when the log carries user ids, queries issued
by fewer than `min_users` distinct users are dropped (NEON's privacy rule) and counted. Malformed lines are counted
with their line numbers (the first few kept as samples) and skipped; they never stop the read."""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict, cast

from newskg.core.errors import NewskgError
from newskg.core.timeaxes import day_key

MALFORMED_SAMPLES = 10
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")


LogRecord = Mapping[str, Any]  # one JSON object or CSV row, as read: every value is checked by `_row`


class QueryLogError(NewskgError):
    REASON = "query_log"


@dataclass(frozen=True)
class LogRow:
    day: int  # yyyymmdd (UTC)
    query: str
    user_id: str | None
    count: int


@dataclass(frozen=True)
class Malformed:
    line: int
    reason: str


class MalformedSample(TypedDict):
    line: int
    reason: str


class LogSummary(TypedDict):
    """How a log was read (`QueryLog.summary`): the report's "log" record."""

    path: str
    records: int
    rows: int
    malformed: int
    malformed_samples: list[MalformedSample]
    has_user_ids: bool
    privacy_min_users: int
    privacy_applied: bool
    dropped_queries: int
    dropped_issues: int
    kept_queries: int
    kept_issues: int


@dataclass
class QueryLog:
    """What a log holds after the privacy rule: counts per (normalised query, day), and how it was read."""

    path: str
    min_users: int
    daily: dict[tuple[str, int], int] = field(default_factory=dict[tuple[str, int], int])  # kept queries only
    text: dict[str, str] = field(default_factory=dict[str, str])  # normalised → first spelling seen (kept queries only)
    rows: int = 0
    malformed: int = 0
    malformed_samples: list[Malformed] = field(default_factory=list[Malformed])
    has_users: bool = False
    dropped_queries: int = 0  # distinct normalised queries under the privacy threshold
    dropped_issues: int = 0  # their summed counts
    kept_queries: int = 0

    def summary(self) -> LogSummary:
        return {
            "path": self.path,
            "records": self.rows + self.malformed,
            "rows": self.rows,
            "malformed": self.malformed,
            "malformed_samples": [{"line": m.line, "reason": m.reason} for m in self.malformed_samples],
            "has_user_ids": self.has_users,
            "privacy_min_users": self.min_users,
            "privacy_applied": self.has_users,
            "dropped_queries": self.dropped_queries,
            "dropped_issues": self.dropped_issues,
            "kept_queries": self.kept_queries,
            "kept_issues": sum(self.daily.values()),
        }


def normalise(query: str) -> str:
    """The form queries are grouped under: Unicode-compatible, case-folded, single-spaced."""
    return " ".join(unicodedata.normalize("NFKC", query).casefold().split())


def parse_day(value: object) -> int:
    """A timestamp → its UTC day: ISO date or datetime (naive = UTC), or epoch seconds/milliseconds."""
    if isinstance(value, bool) or value is None:
        raise ValueError("no timestamp")
    if isinstance(value, int | float) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        seconds = float(value)
        seconds = seconds / 1000 if abs(seconds) > 1e11 else seconds  # milliseconds, by magnitude
        return day_key(dt.datetime.fromtimestamp(seconds, dt.UTC))
    if not isinstance(value, str) or not value.strip():
        raise ValueError("no timestamp")
    text = value.strip()
    try:  # the common ISO shapes without pendulum's slower general parser
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return day_key(text)
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(dt.UTC)
    return parsed.year * 10000 + parsed.month * 100 + parsed.day


def _row(record: LogRecord, line: int) -> LogRow | Malformed:
    query = record.get("query")
    if not isinstance(query, str) or not query.strip():
        return Malformed(line, "no query")
    try:
        day = parse_day(record.get("timestamp"))
    except (ValueError, TypeError, OverflowError, OSError) as exc:
        return Malformed(line, f"bad timestamp: {exc}"[:120])
    user = record.get("user_id")
    user = str(user).strip() if user not in (None, "") else None
    raw_count = record.get("count")
    count = _count(raw_count)
    if count is None:
        return Malformed(line, f"bad count {raw_count!r}"[:120])
    if count < 1:
        return Malformed(line, f"count must be at least 1, not {count}")
    return LogRow(day, query.strip(), user or None, count)


def _jsonl(handle: Iterable[str]) -> Iterator[tuple[int, LogRecord | None]]:
    for number, text in enumerate(handle, 1):
        if not text.strip():
            continue
        try:
            record = json.loads(text)
        except json.JSONDecodeError:
            yield number, None
            continue
        # a JSON object: its keys are strings, its values are checked by _row
        yield number, cast("dict[str, Any]", record) if isinstance(record, dict) else None


def _csv(handle: Iterable[str]) -> Iterator[tuple[int, LogRecord | None]]:
    reader = csv.reader(handle)
    header = next(reader, None)
    if header is None:
        return
    names = [h.strip().lower() for h in header]
    if "timestamp" not in names or "query" not in names:
        raise QueryLogError(f"CSV header must name timestamp and query columns, found {header}")
    for row in reader:
        if not any(cell.strip() for cell in row):
            continue
        yield reader.line_num, dict(zip(names, row, strict=False)) if len(row) == len(names) else None


def read_rows(path: Path) -> Iterator[LogRow | Malformed]:
    """The log's rows one at a time (JSONL by suffix or a leading `{`, else CSV with a header)."""
    with path.open(encoding="utf-8", errors="replace", newline="") as handle:
        first = handle.read(1)
        handle.seek(0)
        records = _jsonl(handle) if path.suffix.lower() in JSONL_SUFFIXES or first == "{" else _csv(handle)
        for line, record in records:
            yield _row(record, line) if record is not None else Malformed(line, "not a record")


def read_log(path: Path, min_users: int = 5) -> QueryLog:
    """The whole log in one pass: see the module's docstring for the memory bound and the privacy rule."""
    if not path.is_file():
        raise QueryLogError(f"query log {path} does not exist")
    log = QueryLog(str(path), min_users)
    users: dict[str, set[str] | None] = {}  # None: reached min_users, passes
    issued: dict[str, int] = {}
    for item in read_rows(path):
        if isinstance(item, Malformed):
            log.malformed += 1
            if len(log.malformed_samples) < MALFORMED_SAMPLES:
                log.malformed_samples.append(item)
            continue
        log.rows += 1
        key = normalise(item.query)
        log.text.setdefault(key, item.query)
        log.daily[(key, item.day)] = log.daily.get((key, item.day), 0) + item.count
        issued[key] = issued.get(key, 0) + item.count
        if item.user_id is not None:
            log.has_users = True
            _add_user(users, key, item.user_id, min_users)
    if log.rows == 0:
        raise QueryLogError(f"query log {path} holds no readable rows ({log.malformed} malformed)")
    if log.has_users:
        _apply_privacy(log, users, issued)
    log.kept_queries = len(log.text)
    return log


def _add_user(users: dict[str, set[str] | None], key: str, user: str, min_users: int) -> None:
    seen = users.setdefault(key, set())
    if seen is None:
        return
    seen.add(user)
    if len(seen) >= min_users:
        users[key] = None


def _apply_privacy(log: QueryLog, users: dict[str, set[str] | None], issued: dict[str, int]) -> None:
    """Drop every query fewer than min_users distinct users issued (rows without a user id count for nobody)."""
    dropped = {key for key in log.text if users.get(key, set()) is not None}
    log.dropped_queries = len(dropped)
    log.dropped_issues = sum(issued[key] for key in dropped)
    log.daily = {cell: n for cell, n in log.daily.items() if cell[0] not in dropped}
    log.text = {key: text for key, text in log.text.items() if key not in dropped}


def _count(raw: object) -> int | None:
    """A line's query count: absent is 1; a whole number, or its digits as text; anything else (2.5, true) None,
    where int() counted 2.5 as 2 and true as 1."""
    if raw is None or raw == "":
        return 1
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and re.fullmatch(r"\s*-?\d+\s*", raw):
        return int(raw)
    return None
