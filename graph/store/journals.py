"""The extract stage's linking journals in the graph (extract/entities/journal.py says what they hold and why).

A journal is stored as compressed text on a `Linking` node keyed by its chunk record, with the order it was made
in (wall-clock ms × PER_BATCH, kept increasing within the stage: extract/stage.py `_next_order`): a restarted stage
reads them all back in that order. The graph does not look inside the body."""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from graph.connection import GraphConnection
from graph.store import reads
from graph.store.rows import StoredJournal, WrittenChunkParts, rows_of

PAGE = 2000
PER_BATCH = 10_000  # order = ms × PER_BATCH, + 1 for each further journal made within that ms


@dataclass(frozen=True)
class JournalRow:
    id: str
    chunk_id: str
    order: int
    body: str

    @staticmethod
    def of(journal_id: str, chunk_id: str, order: int, text: str) -> JournalRow:
        return JournalRow(journal_id, chunk_id, order, pack(text))


def pack(text: str) -> str:
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")


def unpack(body: str) -> str:
    return zlib.decompress(base64.b64decode(body)).decode("utf-8")


def written(conn: GraphConnection, journal_ids: Iterable[str]) -> set[str]:
    """The journals of these ids in the graph: their chunk records were written whole."""
    ids = sorted(set(journal_ids))
    return {str(r["id"]) for r in conn.read(reads.JOURNALS_WRITTEN, {"ids": ids})} if ids else set()


def chunk_parts(conn: GraphConnection, chunk_ids: Iterable[str]) -> list[WrittenChunkParts]:
    ids = sorted(set(chunk_ids))
    return rows_of(WrittenChunkParts, conn.read(reads.WRITTEN_CHUNK_PARTS, {"ids": ids})) if ids else []


def all_in_order(conn: GraphConnection) -> Iterator[str]:
    """Every journal's text, in the order they were made."""
    after, after_id = -1, ""
    while True:
        page = rows_of(
            StoredJournal, conn.read(reads.JOURNALS_PAGE, {"after": after, "after_id": after_id, "limit": PAGE})
        )
        for row in page:
            yield unpack(row.body)
        if len(page) < PAGE:
            return
        after, after_id = page[-1].order, page[-1].id
