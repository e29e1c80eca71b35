"""The mirror's one interface and what every adapter shares: the collections, the payloads, the as-of filter and
the write path (embed, then upsert). Two adapters implement the engine calls: `graph/mirror/edge.py` (Qdrant Edge
in process, the embedded default) and `graph/mirror/qdrant.py` (qdrant-client: a Qdrant server in production,
local mode for comparison). Both are held to the same contract tests (tests/integration/test_vector_store.py).

Point ids are UUID5 of the graph ids, so every upsert is idempotent; payloads carry the graph id, the three time
axes as integers, and the entity and source ids the retrieval filters on. The stage and reconcile write what the
graph holds after its write (graph/mirror/sync.py), so the payload times are the graph's: first published, first
ingested. `mirrored_ms` is the wall-clock instant of the upsert: reconcile deletes only points older than its scan.
Callers above the mirror (qa/) say what they want as an `AsOfFilter`; each adapter translates it to its engine's
filter, so no layer above imports an engine's types."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Generator, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from newskg.core.errors import NewskgError
from newskg.core.records import Chunk, Interaction, Variant
from newskg.graph.mirror.embed import Embedder

INTERACTIONS = "interactions"
CHUNKS = "chunks"
COLLECTIONS = (INTERACTIONS, CHUNKS)
INTEGER_FIELDS = {
    INTERACTIONS: ("event_day", "published_day", "ingested_ms", "mirrored_ms"),
    CHUNKS: ("day", "ingested_ms", "mirrored_ms"),
}
KEYWORD_FIELDS = {
    INTERACTIONS: ("graph_id", "entity_ids", "source_ids", "variant"),
    CHUNKS: ("graph_id", "entity_ids", "source_ids"),
}
# The payload fields that must equal the graph node's (reconcile compares and repairs them): the times, and a
# fact's confidence, which its first record sets with them.
TIME_FIELDS = {
    INTERACTIONS: ("event_day", "published_day", "ingested_ms", "ingested_at", "confidence"),
    CHUNKS: ("day", "ingested_ms", "ingested_at"),
}
# The publication day each collection's as-of bound applies to (graph/store/reads.visible() on the graph side).
DAY_FIELD = {INTERACTIONS: "published_day", CHUNKS: "day"}
# A chunk to mirror with the entity ids it mentions and, optionally, the ids of every source that carried it.
ChunkItem = tuple[Chunk, Iterable[str]] | tuple[Chunk, Iterable[str], Iterable[str]]
Payload = dict[str, Any]  # JSON values by field name, as both engines store them
VectorItem = tuple[Payload, Sequence[float]]  # a payload (with its graph_id) and the vector to store with it


class MirrorInUse(NewskgError, RuntimeError):
    """The embedded mirror's folder is open in another process (both embedded engines admit one)."""

    REASON = "mirror_in_use"


class AsOfFilter(BaseModel):
    """What a semantic search may return: published on or before `day` and ingested by `ingested_ms` (the same
    bounds as graph/store/reads.visible() on the graph's copy of these times), optionally only points naming one
    entity and, for interactions, of one extraction variant."""

    model_config = ConfigDict(frozen=True)

    day: int
    ingested_ms: int
    entity_id: str | None = None
    variant: Variant | None = None


@dataclass(frozen=True, slots=True)
class MirrorHit:
    """One nearest point: its graph id, its cosine to the query, its payload (the fields asked for) and, when asked,
    its stored vector. A dataclass, not a validated model: a search returns tens of them per request, built from
    what the engine returned."""

    graph_id: str
    score: float
    payload: Payload
    vector: list[float] | None = None


def interaction_payload(i: Interaction) -> Payload:
    return {
        "graph_id": i.id,
        "text": i.text,
        "subject_id": i.subject_id,
        "subject_name": i.subject_name,
        "object_id": i.object_id,
        "object_name": i.object_name,
        "entity_ids": [e for e in (i.subject_id, i.object_id) if e],
        "event_day": i.event_day,
        "published_day": i.published_day,
        "ingested_ms": i.ingested_ms,
        "ingested_at": i.ingested_at,
        "variant": i.variant,
        "confidence": i.confidence,
        "chunk_ids": i.chunk_ids,
        "article_ids": i.article_ids,
        "source_ids": i.source_ids,
    }


def chunk_payload(c: Chunk, entity_ids: Iterable[str], source_ids: Iterable[str] = ()) -> Payload:
    return {
        "graph_id": c.id,
        "text": c.text,
        "day": c.day,
        "ingested_ms": c.ingested_ms,
        "ingested_at": c.ingested_at,
        "article_id": c.article_id,
        "article_ids": c.article_ids,
        "source_ids": sorted({c.source_id, *source_ids}),
        "entity_ids": sorted(set(entity_ids)),
        "url": c.url,
        "title": c.title,
    }


class VectorMirror(ABC):
    """The mirror of the graph, one collection of points per kind (INTERACTIONS, CHUNKS). Adapters implement the
    engine calls (the abstract methods); the write path, the scans reconcile makes and text search are shared."""

    # True where the engine tests every point's payload in Python (qdrant-client local mode: seconds per filtered
    # query at 1 M points): QA then takes an entity's candidates from the graph instead (qa/retrieve.py).
    scans_filters: bool = False

    def __init__(self, embedder: Embedder, prefix: str = "newskg_"):
        self.embedder = embedder
        self.prefix = prefix

    def name(self, collection: str) -> str:
        return self.prefix + collection

    # --- the engine calls each adapter implements

    @abstractmethod
    def ensure(self) -> None:
        """Create both collections (with their payload indexes) if missing."""

    @abstractmethod
    def upsert_vectors(self, collection: str, items: Sequence[VectorItem]) -> int:
        """Upsert points whose vectors the caller has (the bulk path: reconcile's and the benches' loads); each
        payload as given, `graph_id` included. Returns the points written."""

    @abstractmethod
    def count(self, collection: str) -> int: ...

    @abstractmethod
    def scroll_payloads(self, collection: str, fields: Sequence[str]) -> Iterator[Payload]:
        """These payload fields of every point, page by page (empty when the collection does not exist)."""

    @abstractmethod
    def payloads(self, collection: str, graph_ids: list[str]) -> list[Payload]:
        """The whole payloads of the points that exist among these ids."""

    @abstractmethod
    def vectors(self, collection: str, graph_ids: list[str]) -> dict[str, list[float]]:
        """graph id → its stored (unit-length) vector, for the ids that exist."""

    @abstractmethod
    def delete(self, collection: str, graph_ids: list[str]) -> None: ...

    @abstractmethod
    def delete_if_older(self, collection: str, graph_ids: list[str], before_ms: int) -> None:
        """Delete these points unless they were (re)written at or after `before_ms`: the engine checks the
        condition with the delete, so a stage upserting one of them meanwhile keeps it. Points from before
        `mirrored_ms` existed count as old."""

    @abstractmethod
    def search_vector(
        self,
        collection: str,
        vector: Sequence[float],
        where: AsOfFilter | None = None,
        limit: int = 10,
        fields: Sequence[str] | None = None,
        with_vectors: bool = False,
    ) -> list[MirrorHit]:
        """The nearest points to a vector the caller embedded, best first, within `where`; each with these payload
        fields (`graph_id` always; None: the whole payload) and, with `with_vectors`, its stored vector (a caller
        that ranks the hits by their vectors then reads nothing again)."""

    @abstractmethod
    def close(self) -> None: ...

    def optimize(self) -> None:  # noqa: B027 — a no-op where the engine indexes on its own (a server)
        """Build whatever index the engine defers (Qdrant Edge's HNSW) now, e.g. after a bulk load."""

    @contextmanager
    def bulk(self) -> Generator[None]:
        """Many writes in a row (a bench's load, reconcile's rebuild): the engine's deferred index is built once, when
        the block ends, not every `index_after` points on the way (each Edge build indexes the points so far again).
        Writes inside are searchable as ever, exactly."""
        yield
        self.optimize()

    # --- shared: the write path and the scans, over the calls above

    def upsert(self, collection: str, payloads: list[Payload]) -> int:
        return self.upsert_many({collection: payloads})[collection]

    def upsert_many(self, batches: dict[str, list[Payload]]) -> dict[str, int]:
        """collection → payloads, their texts embedded in one call (one length-sorted batching for all), then one
        upsert per collection; returns collection → points upserted."""
        texts = [p["text"] for payloads in batches.values() for p in payloads]
        embedded = list(self.embedder.embed(texts))
        if len(embedded) != len(texts):
            raise ValueError(f"the embedder returned {len(embedded)} vectors for {len(texts)} texts")
        vectors = iter(embedded)
        mirrored_ms = int(time.time() * 1000)
        written: dict[str, int] = {}
        for collection, payloads in batches.items():
            items = [(p | {"mirrored_ms": mirrored_ms}, next(vectors)) for p in payloads]
            written[collection] = self.upsert_vectors(collection, items) if items else 0
        return written

    def upsert_interactions(self, interactions: Iterable[Interaction]) -> int:
        return self.upsert_both(interactions, ())[0]

    def upsert_chunks(self, chunks: Iterable[ChunkItem]) -> int:
        """(chunk, entity ids[, source ids]) items."""
        return self.upsert_both((), chunks)[1]

    def upsert_both(self, interactions: Iterable[Interaction], chunks: Iterable[ChunkItem]) -> tuple[int, int]:
        """Interactions and (chunk, entity ids[, source ids]) items with one embedding call; returns how many of
        each were upserted."""
        unique_interactions = {i.id: i for i in interactions}
        unique_chunks = {item[0].id: item for item in chunks}
        written = self.upsert_many(
            {
                INTERACTIONS: [interaction_payload(i) for i in unique_interactions.values()],
                CHUNKS: [_chunk_item_payload(item) for item in unique_chunks.values()],
            }
        )
        return written[INTERACTIONS], written[CHUNKS]

    def graph_ids(self, collection: str) -> set[str]:
        return set(self.time_payloads(collection, fields=()))

    def time_payloads(self, collection: str, fields: tuple[str, ...] | None = None) -> dict[str, Payload]:
        """graph id → its time fields (TIME_FIELDS by default) and `mirrored_ms`, for every point."""
        wanted = ["graph_id", *(TIME_FIELDS[collection] if fields is None else fields), "mirrored_ms"]
        return {str(p["graph_id"]): p for p in self.scroll_payloads(collection, wanted)}

    def search(self, collection: str, text: str, where: AsOfFilter | None = None, limit: int = 10) -> list[MirrorHit]:
        return self.search_vector(collection, self.embedder.embed([text])[0], where, limit)

    def __enter__(self) -> VectorMirror:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _chunk_item_payload(item: ChunkItem) -> Payload:
    if len(item) == 3:
        return chunk_payload(item[0], item[1], item[2])
    return chunk_payload(item[0], item[1])


def hit(payload: Payload | None, score: float, vector: list[float] | None = None) -> MirrorHit:
    """A search result as every adapter returns it (both engines return the payload asked for)."""
    if payload is None:
        raise ValueError("a search hit came back without its payload")
    return MirrorHit(str(payload["graph_id"]), float(score), payload, vector)


def with_graph_id(fields: Sequence[str] | None) -> list[str] | bool:
    """The payload selection for a search: these fields and `graph_id`, or the whole payload (True)."""
    return True if fields is None else sorted({"graph_id", *fields})
