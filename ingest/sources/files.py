"""Files as a source: .html, .html.gz, .txt, JSONL ({url, html|text, published?, source?, title?}), directories.

Content that cannot become a RawArticle (binary files, malformed JSONL lines) is still sent, as its raw bytes,
so the process stage dead-letters it with a reason: bad input never vanishes.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from trafilatura.utils import decode_file

from core.ids import digest
from core.records import RawArticle
from ingest.process.article import raw_article_id
from ingest.process.guards import looks_binary

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
SUFFIXES = (*HTML_SUFFIXES, *(s + ".gz" for s in HTML_SUFFIXES), ".txt", ".txt.gz", ".jsonl", ".jsonl.gz")


@dataclass(frozen=True)
class SourceItem:
    key: str
    value: RawArticle | bytes
    origin: str  # path, or path:line


def find_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(SUFFIXES))
        else:
            yield path


def _read_bytes(path: Path) -> bytes:
    data = path.read_bytes()
    if path.name.lower().endswith(".gz"):
        try:
            return gzip.decompress(data)
        except (OSError, EOFError):
            return data  # not really gzip: let the stage judge the bytes
    return data


def _raw_item(data: bytes, origin: str) -> SourceItem:
    return SourceItem("raw_" + digest("raw", data.decode("latin-1")), data, origin)


def read_file(
    path: Path, source: str | None, date: str | None, fetched_at: str, backfill: bool = False
) -> Iterator[SourceItem]:
    data = _read_bytes(path)
    name = path.name.lower().removesuffix(".gz")
    if name.endswith(".jsonl"):
        yield from _read_jsonl(data, str(path), source, date, fetched_at, backfill)
        return
    if looks_binary(data):
        yield _raw_item(data, str(path))
        return
    text = decode_file(data)
    html, plain = (text, None) if name.endswith(HTML_SUFFIXES) else (None, text)
    raw = RawArticle(
        html=html, text=plain, source=source or "unknown", fetched_at=fetched_at, fallback_date=date, backfill=backfill
    )
    yield SourceItem(raw_article_id(raw), raw, str(path))


def _read_jsonl(
    data: bytes, origin: str, source: str | None, date: str | None, fetched_at: str, backfill: bool
) -> Iterator[SourceItem]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{origin}:{number}"
        try:
            obj = json.loads(line)
            raw = RawArticle(
                url=obj.get("url"),
                html=obj.get("html"),
                text=obj.get("text"),
                source=obj.get("source") or source or "unknown",
                fetched_at=fetched_at,
                published=obj.get("published"),
                title=obj.get("title"),
                fallback_date=date,
                backfill=backfill,
            )
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError, ValidationError, TypeError, RecursionError):
            # RecursionError: a line nested deeper than json can parse (`[[[[...`); the stage dead-letters it too.
            yield _raw_item(line, where)
            continue
        yield SourceItem(raw_article_id(raw), raw, where)
