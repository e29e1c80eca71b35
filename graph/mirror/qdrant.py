"""The mirror over qdrant-client: the same calls for local mode (`path=`) and a server (`url=`). Point ids are
UUID5 of the graph ids, so every upsert is idempotent; payloads carry the graph id, the three time axes as
integers, and the entity and source ids the retrieval filters on. The stage and reconcile write what the graph
holds after its write (graph/mirror/sync.py), so the payload times are the graph's: first published, first
ingested. `mirrored_ms` is the wall-clock instant of the upsert: reconcile deletes only points older than its scan."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Any

from qdrant_client import QdrantClient, models

from core.ids import point_uuid
from core.records import Chunk, Interaction
from graph.mirror.embed import Embedder

INTERACTIONS = "interactions"
CHUNKS = "chunks"
INTEGER_FIELDS = {
    INTERACTIONS: ("event_day", "published_day", "ingested_ms", "mirrored_ms"),
    CHUNKS: ("day", "ingested_ms", "mirrored_ms"),
}
# The payload fields that must equal the graph node's (reconcile compares and repairs them): the times, and a
# fact's confidence, which its first record sets with them.
TIME_FIELDS = {
    INTERACTIONS: ("event_day", "published_day", "ingested_ms", "ingested_at", "confidence"),
    CHUNKS: ("day", "ingested_ms", "ingested_at"),
}
# A chunk to mirror with the entity ids it mentions and, optionally, the ids of every source that carried it.
ChunkItem = tuple[Chunk, Iterable[str]] | tuple[Chunk, Iterable[str], Iterable[str]]
Payload = dict[str, Any]  # qdrant-client's own payload type: JSON values by field name

KEYWORD_FIELDS = {
    INTERACTIONS: ("graph_id", "entity_ids", "source_ids", "variant"),
    CHUNKS: ("graph_id", "entity_ids", "source_ids"),
}


def interaction_payload(i: Interaction) -> dict[str, Any]:
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


def chunk_payload(c: Chunk, entity_ids: Iterable[str], source_ids: Iterable[str] = ()) -> dict[str, Any]:
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


class VectorMirror:
    def __init__(self, client: QdrantClient, embedder: Embedder, prefix: str = "newskg_"):
        self.client = client
        self.embedder = embedder
        self.prefix = prefix
        # `serve --pipeline` shares one client between the stage thread and the API's threads; local mode's
        # storage is plain Python state, so its calls are serialised.
        self.lock = threading.RLock()

    def name(self, collection: str) -> str:
        return self.prefix + collection

    @property
    def is_server(self) -> bool:
        # qdrant-client runs in-process (QdrantLocal) for `path=` or ":memory:", else it talks to a server.
        options = self.client.init_options
        return options.get("path") is None and options.get("location") != ":memory:"

    def ensure(self) -> None:
        for collection in (INTERACTIONS, CHUNKS):
            name = self.name(collection)
            if not self.client.collection_exists(name):
                self.client.create_collection(
                    name, vectors_config=models.VectorParams(size=self.embedder.dim, distance=models.Distance.COSINE)
                )
            if self.is_server:  # local mode filters in Python; payload indexes only matter on a server
                for field in INTEGER_FIELDS[collection]:
                    self.client.create_payload_index(name, field, models.PayloadSchemaType.INTEGER)
                for field in KEYWORD_FIELDS[collection]:
                    self.client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)

    def upsert(self, collection: str, payloads: list[dict[str, Any]]) -> int:
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
            points = [
                models.PointStruct(
                    id=point_uuid(p["graph_id"]), vector=next(vectors), payload=p | {"mirrored_ms": mirrored_ms}
                )
                for p in payloads
            ]
            if points:
                with self.lock:
                    self.client.upsert(self.name(collection), points, wait=True)
            written[collection] = len(points)
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

    def count(self, collection: str) -> int:
        name = self.name(collection)
        with self.lock:
            return self.client.count(name, exact=True).count if self.client.collection_exists(name) else 0

    def graph_ids(self, collection: str) -> set[str]:
        return set(self.time_payloads(collection, fields=()))

    def time_payloads(self, collection: str, fields: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
        """graph id → its time fields (TIME_FIELDS by default) and `mirrored_ms`, for every point."""
        wanted = ["graph_id", *(TIME_FIELDS[collection] if fields is None else fields), "mirrored_ms"]
        found: dict[str, dict[str, Any]] = {}
        offset = None
        name = self.name(collection)
        if not self.client.collection_exists(name):
            return found
        while True:
            with self.lock:
                points, offset = self.client.scroll(
                    name, limit=1000, offset=offset, with_payload=wanted, with_vectors=False
                )
            found.update((str(payload["graph_id"]), payload) for payload in map(_payload, points))
            if offset is None:
                return found

    def payloads(self, collection: str, graph_ids: list[str]) -> list[dict[str, Any]]:
        if not graph_ids:
            return []
        with self.lock:  # local mode: plain Python state, read here by the API's threads while a stage may write
            points = self.client.retrieve(self.name(collection), [point_uuid(g) for g in graph_ids], with_payload=True)
        return [_payload(p) for p in points]

    def delete(self, collection: str, graph_ids: list[str]) -> None:
        if graph_ids:
            self.client.delete(
                self.name(collection), models.PointIdsList(points=[point_uuid(g) for g in graph_ids]), wait=True
            )

    def delete_if_older(self, collection: str, graph_ids: list[str], before_ms: int) -> None:
        """Delete these points unless they were (re)written at or after `before_ms`: the condition is checked by
        Qdrant with the delete, so a stage upserting one of them meanwhile keeps it. Points from before
        `mirrored_ms` existed count as old."""
        if not graph_ids:
            return
        old = models.Filter(
            should=[
                models.FieldCondition(key="mirrored_ms", range=models.Range(lt=before_ms)),
                models.IsEmptyCondition(is_empty=models.PayloadField(key="mirrored_ms")),
            ]
        )
        selector = models.FilterSelector(
            filter=models.Filter(must=[models.HasIdCondition(has_id=[point_uuid(g) for g in graph_ids]), old])
        )
        with self.lock:
            self.client.delete(self.name(collection), selector, wait=True)

    def search(
        self, collection: str, text: str, query_filter: models.Filter | None = None, limit: int = 10
    ) -> list[models.ScoredPoint]:
        return self.search_vector(collection, self.embedder.embed([text])[0], query_filter, limit)

    def search_vector(
        self, collection: str, vector: list[float], query_filter: models.Filter | None = None, limit: int = 10
    ) -> list[models.ScoredPoint]:
        """The nearest points to a vector the caller embedded (QA embeds the original and the reformulated query
        once and searches with their mean)."""
        with self.lock:
            return self.client.query_points(
                self.name(collection), query=vector, query_filter=query_filter, limit=limit, with_payload=True
            ).points

    def vectors(self, collection: str, graph_ids: list[str]) -> dict[str, list[float]]:
        with self.lock:
            points = self.client.retrieve(
                self.name(collection), [point_uuid(g) for g in graph_ids], with_vectors=True, with_payload=["graph_id"]
            )
        return {str(_payload(p)["graph_id"]): _dense(p.vector) for p in points}

    def close(self) -> None:
        self.client.close()


def _chunk_item_payload(item: ChunkItem) -> Payload:
    if len(item) == 3:
        return chunk_payload(item[0], item[1], item[2])
    return chunk_payload(item[0], item[1])


def _payload(point: models.Record) -> Payload:
    """A point read back with its payload (every read here asks for it)."""
    if point.payload is None:
        raise ValueError(f"point {point.id} came back without its payload")
    return point.payload


def _dense(vector: models.VectorStructOutput | None) -> list[float]:
    """The point's one unnamed dense vector (the only kind these collections hold)."""
    values = [x for x in vector if isinstance(x, float)] if isinstance(vector, list) else []
    if not values or len(values) != len(vector or []):
        raise ValueError("expected one unnamed dense vector")
    return values
