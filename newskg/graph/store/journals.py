"""The extract stage's linking journals in the graph (extract/entities/journal.py says what they hold and why).

A journal is stored as compressed text on a `Linking` node keyed by its chunk record, with the order it was made
in (wall-clock ms × PER_BATCH, kept increasing within the stage: extract/stage.py `_next_order`): a restarted stage
reads them all back in that order. The graph does not look inside the body."""

from __future__ import annotations

import base64
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from newskg.graph.connection import GraphConnection
from newskg.graph.store import reads
from newskg.graph.store.rows import StoredJournal, WrittenChunkParts, rows_of

PAGE = 2000
PER_BATCH = 10_000  # order = ms × PER_BATCH, + 1 for each further journal made within that ms
NO_JOURNAL = ""  # the body of a chunk linking did not read (another language): written whole, nothing to replay

# The chunks among these with a journal of any record: those journals' ids and articles (Linking.chunk_id is
# indexed: graph/store/schema.py).
JOURNALS_OF_CHUNKS = """
UNWIND $ids AS cid
MATCH (l:Linking {chunk_id: cid})
RETURN l.chunk_id AS chunk_id, l.id AS id, l.article_id AS article_id
"""
# Journals by id, with their chunks: what the extract stage puts on the linking log again for a chunk it finds
# written whole (extract/entities/link_log.py).
JOURNAL_BODIES = """
UNWIND $ids AS jid
MATCH (l:Linking {id: jid})
RETURN l.id AS id, l.chunk_id AS chunk_id, l.body AS body
"""


@dataclass(frozen=True)
class JournalRow:
    id: str
    chunk_id: str
    order: int
    body: str
    article_id: str = ""  # the article of the chunk record: the same chunk in another article is another record

    @staticmethod
    def of(journal_id: str, chunk_id: str, order: int, text: str, article_id: str = "") -> JournalRow:
        return JournalRow(journal_id, chunk_id, order, pack(text), article_id)


def pack(text: str) -> str:
    return base64.b64encode(zlib.compress(text.encode("utf-8"), 6)).decode("ascii")


def unpack(body: str) -> str:
    return zlib.decompress(base64.b64decode(body)).decode("utf-8")


def written(conn: GraphConnection, journal_ids: Iterable[str]) -> set[str]:
    """The journals of these ids in the graph: their chunk records were written whole."""
    ids = sorted(set(journal_ids))
    return {str(r["id"]) for r in conn.read(reads.JOURNALS_WRITTEN, {"ids": ids})} if ids else set()


def written_chunks(conn: GraphConnection, chunk_ids: Iterable[str]) -> dict[str, dict[str, str | None]]:
    """Chunk id → {journal id → the article of its record (None: a journal written before articles were noted)},
    for the chunks among these written whole by some record."""
    ids = sorted(set(chunk_ids))
    found: dict[str, dict[str, str | None]] = {}
    for row in conn.read(JOURNALS_OF_CHUNKS, {"ids": ids}) if ids else []:
        article = row["article_id"]
        found.setdefault(str(row["chunk_id"]), {})[str(row["id"])] = str(article) if article else None
    return found


def chunk_parts(conn: GraphConnection, chunk_ids: Iterable[str]) -> list[WrittenChunkParts]:
    ids = sorted(set(chunk_ids))
    return rows_of(WrittenChunkParts, conn.read(reads.WRITTEN_CHUNK_PARTS, {"ids": ids})) if ids else []


def bodies(conn: GraphConnection, journal_ids: Iterable[str]) -> list[tuple[str, str, str]]:
    """(journal id, chunk id, text) of the journals of these ids in the graph."""
    ids = sorted(set(journal_ids))
    rows = conn.read(JOURNAL_BODIES, {"ids": ids}) if ids else []
    return [(str(r["id"]), str(r["chunk_id"]), unpack(str(r["body"]))) for r in rows]


def all_in_order(conn: GraphConnection) -> Iterator[str]:
    """Every journal's text, in the order they were made (NO_JOURNAL for a chunk linking did not read)."""
    for _, text in in_order(conn):
        yield text


def in_order(conn: GraphConnection) -> Iterator[tuple[str, str]]:
    """(journal id, text) of every journal, in the order they were made."""
    after, after_id = -1, ""
    while True:
        page = rows_of(
            StoredJournal, conn.read(reads.JOURNALS_PAGE, {"after": after, "after_id": after_id, "limit": PAGE})
        )
        for row in page:
            yield row.id, unpack(row.body)
        if len(page) < PAGE:
            return
        after, after_id = page[-1].order, page[-1].id
