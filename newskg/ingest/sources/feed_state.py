"""What the feed poller remembers across restarts: URLs already sent, and each feed's ETag/Last-Modified."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from newskg.core.ids import canonical_url
from newskg.core.timeaxes import iso, utc_now

SCHEMA = """
CREATE TABLE IF NOT EXISTS seen_urls (url TEXT PRIMARY KEY, outcome TEXT NOT NULL, at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS feeds (url TEXT PRIMARY KEY, etag TEXT, last_modified TEXT, polled_at TEXT);
"""


class FeedState:
    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=30, isolation_level=None)
        self._db.executescript(SCHEMA)

    def seen(self, url: str) -> bool:
        row = self._db.execute("SELECT 1 FROM seen_urls WHERE url = ?", (_key(url),)).fetchone()
        return row is not None

    def mark_seen(self, url: str, outcome: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO seen_urls (url, outcome, at) VALUES (?, ?, ?)",
            (_key(url), outcome, iso(utc_now())),
        )

    def validators(self, feed_url: str) -> tuple[str | None, str | None]:
        row = self._db.execute("SELECT etag, last_modified FROM feeds WHERE url = ?", (feed_url,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def save_validators(self, feed_url: str, etag: str | None, last_modified: str | None) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO feeds (url, etag, last_modified, polled_at) VALUES (?, ?, ?, ?)",
            (feed_url, etag, last_modified, iso(utc_now())),
        )

    def close(self) -> None:
        self._db.close()


def _key(url: str) -> str:
    """The canonical URL, else the URL as given: a link whose port does not parse is remembered too (as a dead
    letter), so later polls skip it instead of stopping at it."""
    try:
        return canonical_url(url)
    except ValueError:
        return url.strip()
