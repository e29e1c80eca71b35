"""The mirror over qdrant-client: a Qdrant server in production (`url=`); local mode (`path=` or ":memory:") runs
the same calls in process, for comparison and for this adapter's contract tests (no Qdrant server binary exists on
these machines). Local mode evaluates payload filters in Python over every point (`scans_filters`), so the
embedded default is the Qdrant Edge adapter (graph/mirror/edge.py)."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence

from qdrant_client import QdrantClient, models

from newskg.core.ids import point_uuid
from newskg.graph.mirror.base import (
    CHUNKS,
    COLLECTIONS,
    DAY_FIELD,
    INTEGER_FIELDS,
    INTERACTIONS,
    KEYWORD_FIELDS,
    TIME_FIELDS,
    AsOfFilter,
    ChunkItem,
    MirrorHit,
    MirrorInUse,
    Payload,
    VectorItem,
    VectorMirror,
    chunk_payload,
    hit,
    interaction_payload,
    with_graph_id,
)
from newskg.graph.mirror.embed import Embedder

# Importers outside graph/mirror (extract/, evaluation/, bench/) take the shared names from here, as before the
# interface existed.
__all__ = [
    "CHUNKS",
    "INTERACTIONS",
    "TIME_FIELDS",
    "ChunkItem",
    "Payload",
    "QdrantClientMirror",
    "VectorMirror",
    "chunk_payload",
    "interaction_payload",
]


def open_local(path: str) -> QdrantClient:
    """qdrant-client local mode on a folder; MirrorInUse when another process holds it (its folder lock)."""
    try:
        return QdrantClient(path=path)
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise MirrorInUse(str(exc)) from exc
        raise


class QdrantClientMirror(VectorMirror):
    def __init__(self, client: QdrantClient, embedder: Embedder, prefix: str = "newskg_"):
        super().__init__(embedder, prefix)
        self.client = client
        # `serve --pipeline` shares one client between the stage thread and the API's threads; local mode's
        # storage is plain Python state, so its calls are serialised.
        self.lock = threading.RLock()
        options = client.init_options  # in process (QdrantLocal) for `path=` or ":memory:", else a server
        self.scans_filters = options.get("path") is not None or options.get("location") == ":memory:"

    def ensure(self) -> None:
        for collection in COLLECTIONS:
            name = self.name(collection)
            if not self.client.collection_exists(name):
                self.client.create_collection(
                    name, vectors_config=models.VectorParams(size=self.embedder.dim, distance=models.Distance.COSINE)
                )
            if not self.scans_filters:  # local mode filters in Python; payload indexes only matter on a server
                for field in INTEGER_FIELDS[collection]:
                    self.client.create_payload_index(name, field, models.PayloadSchemaType.INTEGER)
                for field in KEYWORD_FIELDS[collection]:
                    self.client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)

    def upsert_vectors(self, collection: str, items: Sequence[VectorItem]) -> int:
        points = [models.PointStruct(id=point_uuid(p["graph_id"]), vector=list(v), payload=p) for p, v in items]
        if points:
            with self.lock:
                self.client.upsert(self.name(collection), points, wait=True)
        return len(points)

    def count(self, collection: str) -> int:
        name = self.name(collection)
        with self.lock:
            return self.client.count(name, exact=True).count if self.client.collection_exists(name) else 0

    def scroll_payloads(self, collection: str, fields: Sequence[str]) -> Iterator[Payload]:
        name = self.name(collection)
        if not self.client.collection_exists(name):
            return
        offset = None
        while True:
            with self.lock:
                points, offset = self.client.scroll(
                    name, limit=1000, offset=offset, with_payload=list(fields), with_vectors=False
                )
            yield from map(_payload, points)
            if offset is None:
                return

    def payloads(self, collection: str, graph_ids: list[str]) -> list[Payload]:
        if not graph_ids:
            return []
        with self.lock:  # local mode: plain Python state, read here by the API's threads while a stage may write
            points = self.client.retrieve(self.name(collection), [point_uuid(g) for g in graph_ids], with_payload=True)
        return [_payload(p) for p in points]

    def vectors(self, collection: str, graph_ids: list[str]) -> dict[str, list[float]]:
        if not graph_ids:
            return {}
        with self.lock:
            points = self.client.retrieve(
                self.name(collection), [point_uuid(g) for g in graph_ids], with_vectors=True, with_payload=["graph_id"]
            )
        return {str(_payload(p)["graph_id"]): _dense(p.vector) for p in points}

    def delete(self, collection: str, graph_ids: list[str]) -> None:
        if graph_ids:
            with self.lock:
                self.client.delete(
                    self.name(collection), models.PointIdsList(points=[point_uuid(g) for g in graph_ids]), wait=True
                )

    def delete_if_older(self, collection: str, graph_ids: list[str], before_ms: int) -> None:
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

    def search_vector(
        self,
        collection: str,
        vector: Sequence[float],
        where: AsOfFilter | None = None,
        limit: int = 10,
        fields: Sequence[str] | None = None,
        with_vectors: bool = False,
    ) -> list[MirrorHit]:
        with self.lock:
            points = self.client.query_points(
                self.name(collection),
                query=list(vector),
                query_filter=as_of_filter(collection, where) if where else None,
                limit=limit,
                with_payload=with_graph_id(fields),
                with_vectors=with_vectors,
            ).points
        return [hit(p.payload, p.score, _dense(p.vector) if with_vectors else None) for p in points]

    def close(self) -> None:
        self.client.close()


def as_of_filter(collection: str, where: AsOfFilter) -> models.Filter:
    """The as-of view in qdrant-client's filter model."""
    must: list[models.Condition] = [
        models.FieldCondition(key=DAY_FIELD[collection], range=models.Range(lte=where.day)),
        models.FieldCondition(key="ingested_ms", range=models.Range(lte=where.ingested_ms)),
    ]
    if where.entity_id:
        must.append(models.FieldCondition(key="entity_ids", match=models.MatchValue(value=where.entity_id)))
    if where.variant and collection == INTERACTIONS:
        must.append(models.FieldCondition(key="variant", match=models.MatchValue(value=where.variant)))
    return models.Filter(must=must)


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
