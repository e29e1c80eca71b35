"""Files as a source: .html, .html.gz, .txt, JSONL ({url, html|text, published?, source?, title?}), directories.

Content that cannot become a RawArticle (binary files, malformed JSONL lines) is still sent, as its raw bytes,
so the process stage dead-letters it with a reason. What cannot be read as content at all (an empty file, a
corrupt gzip, more than `max_bytes` once decompressed, a JSONL line whose URL does not parse, a file the OS will
not read) is a dead letter this source writes itself (stage `files`). Either way bad input never vanishes, and
the run goes on with the next file or line.
"""

from __future__ import annotations

import gzip
import io
import json
import zlib
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError
from trafilatura.utils import decode_file

from newskg.core.ids import digest
from newskg.core.records import DeadLetter, RawArticle
from newskg.core.settings import get_settings
from newskg.ingest.process.article import raw_article_id
from newskg.ingest.process.guards import looks_binary
from newskg.ingest.sources.rejects import SourceRejected, source_dead_letter

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
SUFFIXES = (*HTML_SUFFIXES, *(s + ".gz" for s in HTML_SUFFIXES), ".txt", ".txt.gz", ".jsonl", ".jsonl.gz")
# Not OSError, which gzip.BadGzipFile is: a truncated stream raises EOFError, a damaged one zlib.error.
GZIP_ERRORS = (gzip.BadGzipFile, zlib.error, EOFError)


@dataclass(frozen=True)
class SourceItem:
    key: str
    value: RawArticle | bytes | DeadLetter  # a DeadLetter goes to the dead-letter topic, the rest to articles
    origin: str  # path, or path:line


def find_files(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.name.lower().endswith(SUFFIXES))
        else:
            yield path


def read_file(
    path: Path,
    source: str | None,
    date: str | None,
    fetched_at: str,
    backfill: bool = False,
    max_bytes: int | None = None,
) -> Iterator[SourceItem]:
    """The items of one file; `max_bytes` (default NEWSKG_MAX_PAGE_BYTES) bounds a page, and each JSONL line,
    as decompressed: reading stops there, so a small .gz cannot fill memory."""
    limit = get_settings().max_page_bytes if max_bytes is None else max_bytes
    name = path.name.lower().removesuffix(".gz")
    try:
        if name.endswith(".jsonl"):
            yield from _read_jsonl(path, source, date, fetched_at, backfill, limit)
        else:
            yield _read_page(path, name, source, date, fetched_at, backfill, limit)
    except SourceRejected as exc:  # the file (or, for JSONL, the rest of it after the lines already read)
        yield _rejected(str(path), exc)


@contextmanager
def _reading(path: Path) -> Generator[io.BufferedIOBase]:
    """The file opened for reading, decompressed as it is read if it is a .gz; failures to read it become
    rejections, so they are dead-lettered instead of ending the run."""
    try:
        with gzip.open(path, "rb") if path.name.lower().endswith(".gz") else path.open("rb") as stream:
            yield stream
    except GZIP_ERRORS as exc:
        raise SourceRejected("corrupt_gzip", f"{path}: {exc}") from exc
    except OSError as exc:
        raise SourceRejected("unreadable_file", f"{path}: {exc}") from exc


def _read_page(
    path: Path, name: str, source: str | None, date: str | None, fetched_at: str, backfill: bool, limit: int
) -> SourceItem:
    with _reading(path) as stream:
        data = stream.read(limit + 1)
    if len(data) > limit:
        raise SourceRejected("too_large", f"{path}: more than {limit} bytes")
    if not data.strip():  # a RawArticle needs content; an empty page would otherwise stop the whole run
        raise SourceRejected("empty_file", f"{path}: no content")
    if looks_binary(data):
        return _raw_item(data, str(path))
    text = decode_file(data)
    html, plain = (text, None) if name.endswith(HTML_SUFFIXES) else (None, text)
    raw = RawArticle(
        html=html, text=plain, source=source or "unknown", fetched_at=fetched_at, fallback_date=date, backfill=backfill
    )
    return SourceItem(raw_article_id(raw), raw, str(path))


def _read_jsonl(
    path: Path, source: str | None, date: str | None, fetched_at: str, backfill: bool, limit: int
) -> Iterator[SourceItem]:
    with _reading(path) as stream:
        for number, line in enumerate(_lines(stream, limit), start=1):
            where = f"{path}:{number}"
            if line is None:
                yield _rejected(where, SourceRejected("too_large", f"{where}: a line of more than {limit} bytes"))
            elif line.strip():
                yield _line_item(line, where, source, date, fetched_at, backfill)


def _lines(stream: io.BufferedIOBase, limit: int) -> Iterator[bytes | None]:
    """Each line, or None for one longer than `limit` (its rest skipped, never held whole)."""
    while line := stream.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        while line and not line.endswith(b"\n"):
            line = stream.readline(limit + 1)
        yield None


def _line_item(
    line: bytes, where: str, source: str | None, date: str | None, fetched_at: str, backfill: bool
) -> SourceItem:
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
        return _raw_item(line, where)
    try:
        key = raw_article_id(raw)
    except ValueError as exc:  # the canonical URL needs its port: `http://h:abc/` or `:99999` does not parse
        return _rejected(where, SourceRejected("invalid_url", f"{where}: url {raw.url!r}: {exc}"), line)
    return SourceItem(key, raw, where)


def _raw_item(data: bytes, origin: str) -> SourceItem:
    return SourceItem("raw_" + digest("raw", data.decode("latin-1")), data, origin)


def _rejected(origin: str, error: SourceRejected, payload: bytes = b"") -> SourceItem:
    return SourceItem(origin, source_dead_letter("files", origin, error, payload), origin)
