"""The mirror on Qdrant Edge (PyPI qdrant-edge-py, pinned: beta): the Qdrant engine in process, one `EdgeShard`
per collection in its own folder (`<root>/<prefix><collection>`), with a write-ahead log, payload indexes on the
fields the as-of filters and reconcile use (integer times, keyword ids) and HNSW laid out per entity (Qdrant's
multitenancy layout: TENANT_FIELD).

What this adapter relies on, each pinned by tests/integration/test_vector_store.py and test_edge_kill.py:
- One process opens a shard at a time: a second `EdgeShard.load` fails on the WAL's lock ("Can't init WAL:
  WouldBlock"), raised here as MirrorInUse. (Without a WAL there is no lock, and an open shard does not see
  another process's writes: not a way to share it.)
- Every `update` is in the WAL before it returns, so a kill -9 loses nothing acknowledged: the next load replays
  the WAL. A shard that does not load is rebuilt from the graph (`graph reconcile`): it is derived data.
- Edge runs no background optimizer: points land in an appendable segment searched exactly (payload indexes
  first), and `optimize()` builds HNSW. It holds the GIL for its whole run (~0.25 ms a point at 100k), so it
  runs only after a write leaves `index_after` points unindexed (not inside `bulk()`, which builds it once at its
  end), after bulk loads and in reconcile, never per query.
- `flush()` costs 50–120 ms (it syncs the segment files); the WAL already makes a write durable against a crash,
  so flushes are spaced (FLUSH_EVERY_S) to keep the WAL replay at the next load short."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, cast

from qdrant_edge import (
    CountRequest,
    Distance,
    EdgeConfig,
    EdgeOptimizersConfig,
    EdgeShard,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    HasIdCondition,
    HnswIndexConfig,
    IntegerIndexParams,
    IsEmptyCondition,
    KeywordIndexParams,
    MatchValue,
    Memory,
    Point,
    Query,
    QueryRequest,
    RangeFloat,
    Record,
    ScrollRequest,
    SearchParams,
    UpdateOperation,
)

from newskg.core.ids import point_uuid
from newskg.graph.mirror.base import (
    COLLECTIONS,
    DAY_FIELD,
    INTEGER_FIELDS,
    INTERACTIONS,
    KEYWORD_FIELDS,
    AsOfFilter,
    MirrorHit,
    MirrorInUse,
    Payload,
    VectorItem,
    VectorMirror,
    hit,
    with_graph_id,
)
from newskg.graph.mirror.embed import Embedder

if TYPE_CHECKING:  # the stub's type aliases: not names of the binding at run time
    from qdrant_edge import PointId, Vector

log = logging.getLogger(__name__)

FLUSH_EVERY_S = 5.0  # the WAL replayed at the next load holds at most this many seconds of writes
PAGE = 1000  # points per scroll page and per bulk upsert call
# One search thread: a query of this mirror is well under a millisecond, and with the default pool (one thread a
# core) its threads compete with ONNX Runtime's spinning intra-op threads right after the query's embedding: 7 ms
# against 1.7 ms a search on the 2 cores here (QA's hybrid path, measured).
SEARCH_THREADS = 1
CONFIG_FILE = "edge_config.json"  # what EdgeShard.create writes: its presence means the shard exists
# The payload indexes live on disk (Cold: mapped, read through the page cache), not in RAM (the engine's default),
# and the integer fields have only their range index: every filter on them is a range (as_of_filter,
# delete_if_older). In RAM, the two collections' indexes held ~64 MB of the QA API's 20k-interaction process
# (load 208 → 140 MB, bench/qa.py's shard) for the same search CPU (0.25-0.29 ms, 2,000 filtered searches): RSS
# the API's issue-30 budget (512 MB at 20k) did not have. Growing with the points, it would weigh more at 1 M.
INDEX_MEMORY = Memory.Cold
# Qdrant's multitenancy layout, the entity as the tenant: every QA vector search is filtered by one entity
# (qa/retrieve.py), so no global graph (m=0) but a subgraph per entity (payload_m links), built only for an entity
# with more than FULL_SCAN_POINTS points; a smaller one is scanned exactly through its payload index. The global
# graph made the build the slow part at scale: the QA bench's 1.2 M points (1 M facts, 200k chunks) took over an
# hour to load and index on these 2 cores, 835 s now. bench/edge_hnsw.py at 100k points, both in one run: the
# build 249 → 27 CPU-s; a hub's search (2,000-7,000 facts) p50 3.2 → 3.2 ms, p95 6.9 → 4.8 ms, recall@10 against
# the exact search 0.955 → 0.977; an entity of 700-1,500 facts ~1.3 ms, of 3-10 facts ~0.1 ms, both exact.
# payload_m=16 and ef_construct=100 (the engine's defaults) gave a hub recall@10 of 0.84-0.90. Open (issue 30): at
# 1 M points the 5 busiest hubs (~10k-43k facts) get recall@10 0.72 at HNSW_EF 128 (p50 6.4 ms warm), 0.905 at 256,
# 0.98 at 512 (15.5 ms), while their exact scan takes 13.1 ms (p95 25 ms): on these random vectors a hub's exact
# scan is the better trade at that size (FULL_SCAN_POINTS past the busiest entity), not yet re-measured in QA.
TENANT_FIELD = "entity_ids"
PAYLOAD_M = 32
EF_CONSTRUCT = 200
HNSW_EF = 128  # the candidates an entity's subgraph search keeps
# The engine's own threshold is in KB of vectors: hnsw_config() converts it for the dimension.
FULL_SCAN_POINTS = 2_000
# The payload fields that get HNSW links of their own: only the tenant. The time fields and the variant are range
# or match conditions checked on the entity's subgraph walk; links of their own (per value block, over all points)
# were the global-scale build the tenant layout avoids. event_day, mirrored_ms, graph_id and source_ids are only
# looked up or deleted by.
LINKED_FIELDS = frozenset({TENANT_FIELD})
ENTITY_SEARCH = SearchParams(hnsw_ef=HNSW_EF)
# A search without an entity (the warm-up's is given one; IRB's dense retrieval, reconcile's text search) has no
# graph to walk with m=0: the engine's approximate search found next to nothing (recall@10 0.02 at 20k points). It
# scans the points its filter passes, exactly: ~5 ms unfiltered, ~30 ms with an as-of filter at 100k points.
EXACT = SearchParams(exact=True)


class EdgeMirror(VectorMirror):
    def __init__(self, root: Path, embedder: Embedder, prefix: str = "newskg_", index_after: int = 20_000):
        super().__init__(embedder, prefix)
        self.root = root
        self.index_after = index_after
        self._shards: dict[str, EdgeShard] = {}
        self._flushed: dict[str, float] = {}  # collection → when its shard was last flushed (monotonic)
        self._bulk = False  # inside bulk(): the index is built when the block ends
        self._stale_hnsw: set[str] = set()  # collections whose shard was built with another HNSW config

    def path(self, collection: str) -> Path:
        return self.root / self.name(collection)

    def ensure(self) -> None:
        for collection in COLLECTIONS:
            shard = self._load_or_set_aside(collection) or self._create(collection)
            indexed = shard.info().payload_schema
            for field, params in index_params(collection).items():
                current = indexed[field].params if field in indexed else None
                if current is not None and _same_index(current, params):
                    continue
                if field in indexed:  # a shard from before INDEX_MEMORY or LINKED_FIELDS: its index rebuilt once
                    log.info("Qdrant Edge shard %s: payload index %s rebuilt", self.path(collection), field)
                    shard.update(UpdateOperation.delete_field_index(field))
                shard.update(UpdateOperation.create_field_index(field, params))
            if collection in self._stale_hnsw:  # its segments' graphs are of an older config: rebuilt once, here
                log.info("Qdrant Edge shard %s: HNSW rebuilt with the tenant config", self.path(collection))
                shard.optimize()
                shard.flush()
                self._stale_hnsw.discard(collection)

    def upsert_vectors(self, collection: str, items: Sequence[VectorItem]) -> int:
        shard = self._shard(collection) or self._create(collection)
        for start in range(0, len(items), PAGE):
            page = items[start : start + PAGE]
            points = [Point(id=point_uuid(p["graph_id"]), vector=list(v), payload=p) for p, v in page]
            shard.update(UpdateOperation.upsert_points(points))
        self._after_write(collection, shard)
        return len(items)

    def count(self, collection: str) -> int:
        shard = self._shard(collection)
        return shard.count(CountRequest(exact=True)) if shard else 0

    def scroll_payloads(self, collection: str, fields: Sequence[str]) -> Iterator[Payload]:
        shard = self._shard(collection)
        offset = None
        while shard is not None:
            records, offset = shard.scroll(
                ScrollRequest(offset=offset, limit=PAGE, with_payload=list(fields), with_vector=False)
            )
            yield from map(_payload, records)
            if offset is None:
                return

    def payloads(self, collection: str, graph_ids: list[str]) -> list[Payload]:
        shard = self._shard(collection)
        if shard is None or not graph_ids:
            return []
        records = shard.retrieve([point_uuid(g) for g in graph_ids], with_payload=True, with_vector=False)
        return [_payload(r) for r in records]

    def vectors(self, collection: str, graph_ids: list[str]) -> dict[str, list[float]]:
        shard = self._shard(collection)
        if shard is None or not graph_ids:
            return {}
        # Point ids map back to the graph ids asked for: no payload read (a third of the call's cost).
        by_point = {point_uuid(g): g for g in graph_ids}
        records = shard.retrieve(list(by_point), with_payload=False, with_vector=True)
        return {by_point[str(r.id)]: _dense(r.vector, r.id) for r in records}

    def delete(self, collection: str, graph_ids: list[str]) -> None:
        shard = self._shard(collection)
        if shard is not None and graph_ids:
            shard.update(UpdateOperation.delete_points([point_uuid(g) for g in graph_ids]))
            self._after_write(collection, shard)

    def delete_if_older(self, collection: str, graph_ids: list[str], before_ms: int) -> None:
        shard = self._shard(collection)
        if shard is None or not graph_ids:
            return
        written_before = FieldCondition(key="mirrored_ms", range=RangeFloat(lt=before_ms))
        old = Filter(should=[written_before, IsEmptyCondition(key="mirrored_ms")])
        ids = HasIdCondition({point_uuid(g) for g in graph_ids})
        shard.update(UpdateOperation.delete_points_by_filter(Filter(must=[ids, old])))
        self._after_write(collection, shard)

    def search_vector(
        self,
        collection: str,
        vector: Sequence[float],
        where: AsOfFilter | None = None,
        limit: int = 10,
        fields: Sequence[str] | None = None,
        with_vectors: bool = False,
    ) -> list[MirrorHit]:
        shard = self._shard(collection)
        if shard is None:
            return []
        request = QueryRequest(
            limit=limit,
            query=Query.Nearest(list(vector)),
            filter=as_of_filter(collection, where) if where else None,
            with_payload=with_graph_id(fields),
            with_vector=with_vectors,
            params=ENTITY_SEARCH if where and where.entity_id else EXACT,
        )
        found = shard.query(request)
        return [hit(p.payload, p.score, _dense(p.vector, p.id) if with_vectors else None) for p in found]

    def optimize(self) -> None:
        for collection, shard in self._shards.items():
            shard.optimize()
            shard.flush()
            self._flushed[collection] = time.monotonic()

    def close(self) -> None:
        shards, self._shards = self._shards, {}
        for shard in shards.values():
            shard.flush()
            shard.close()

    # --- shards

    def _shard(self, collection: str) -> EdgeShard | None:
        """The collection's open shard, loaded on first use; None while it was never created."""
        shard = self._shards.get(collection)
        if shard is None and (self.path(collection) / CONFIG_FILE).exists():
            # Loaded with this adapter's config (the engine checks it fits and writes it over the shard's): a shard
            # built with another HNSW config is rebuilt by its next optimize() (ensure() runs one).
            if self._hnsw_on_disk(collection) != hnsw_json(self.embedder.dim):
                self._stale_hnsw.add(collection)
            shard = self._shards[collection] = _load(self.path(collection), self._config())
        return shard

    def _hnsw_on_disk(self, collection: str) -> dict[str, object] | None:
        """The HNSW config the shard was last opened with (its edge_config.json), None while there is no shard."""
        try:
            return json.loads((self.path(collection) / CONFIG_FILE).read_text()).get("hnsw_config")
        except FileNotFoundError:
            return None
        except ValueError:  # an unreadable config: the load says what is wrong with the shard
            return None

    def _load_or_set_aside(self, collection: str) -> EdgeShard | None:
        """The shard, or None when there is none or it does not load: then it is moved aside (kept for a look, next
        to it) and an empty one takes its place. The mirror is derived data: `graph reconcile` rebuilds it from the
        graph, and `graph stats` shows the gap meanwhile. A shard held by another process is not damaged: that
        raises MirrorInUse."""
        try:
            return self._shard(collection)
        except MirrorInUse:
            raise
        except Exception as exc:  # the binding raises a bare Exception for every load failure
            path = self.path(collection)
            aside = path.with_name(f"{path.name}.unloadable-{int(time.time() * 1000)}")
            path.rename(aside)
            log.warning(
                "Qdrant Edge shard %s does not load (%s): moved to %s; run `newskg graph reconcile`", path, exc, aside
            )
            return None

    def _config(self) -> EdgeConfig:
        # The engine's own indexing threshold (KB of vectors) set to `index_after` points, so optimize() indexes
        # exactly when _after_write asks it to.
        return EdgeConfig(
            vectors=EdgeVectorParams(size=self.embedder.dim, distance=Distance.Cosine),
            hnsw_config=hnsw_config(self.embedder.dim),
            optimizers=EdgeOptimizersConfig(indexing_threshold=_kb(self.index_after, self.embedder.dim)),
            max_search_threads=SEARCH_THREADS,  # kept in the shard's edge_config.json: every later load has it
        )

    def _create(self, collection: str) -> EdgeShard:
        self.path(collection).mkdir(parents=True, exist_ok=True)
        shard = self._shards[collection] = EdgeShard.create(str(self.path(collection)), self._config())
        return shard

    @contextmanager
    def bulk(self) -> Generator[None]:
        """No index build between the block's writes (the base's docstring says why): one, when it ends."""
        self._bulk = True
        try:
            yield
        finally:
            self._bulk = False
        self.optimize()

    def _after_write(self, collection: str, shard: EdgeShard) -> None:
        info = shard.info()
        if not self._bulk and info.points_count - info.indexed_vectors_count >= self.index_after:
            shard.optimize()
        elif time.monotonic() - self._flushed.setdefault(collection, time.monotonic()) < FLUSH_EVERY_S:
            return
        shard.flush()
        self._flushed[collection] = time.monotonic()


def hnsw_config(dim: int) -> HnswIndexConfig:
    """The tenant layout (TENANT_FIELD's comment): no global graph, a subgraph per entity past FULL_SCAN_POINTS."""
    return HnswIndexConfig(
        m=0, ef_construct=EF_CONSTRUCT, full_scan_threshold=_kb(FULL_SCAN_POINTS, dim), payload_m=PAYLOAD_M
    )


def hnsw_json(dim: int) -> dict[str, object]:
    """hnsw_config(dim) as the engine writes it in edge_config.json: what a shard built with it reads back."""
    return {
        "m": 0,
        "ef_construct": EF_CONSTRUCT,
        "full_scan_threshold": _kb(FULL_SCAN_POINTS, dim),
        "max_indexing_threads": 0,
        "payload_m": PAYLOAD_M,
    }


def _kb(points: int, dim: int) -> int:
    """The engine's thresholds are KB of float32 vectors."""
    return max(1, points * dim * 4 // 1024)


def index_params(collection: str) -> dict[str, IntegerIndexParams | KeywordIndexParams]:
    """The payload index of each field the filters and reconcile use, as this adapter creates it (INDEX_MEMORY)."""
    params: dict[str, IntegerIndexParams | KeywordIndexParams] = {
        field: IntegerIndexParams(lookup=False, range=True, memory=INDEX_MEMORY, enable_hnsw=field in LINKED_FIELDS)
        for field in INTEGER_FIELDS[collection]
    }
    return params | {
        field: KeywordIndexParams(
            memory=INDEX_MEMORY, enable_hnsw=field in LINKED_FIELDS, is_tenant=True if field == TENANT_FIELD else None
        )
        for field in KEYWORD_FIELDS[collection]
    }


def _same_index(current: object, wanted: IntegerIndexParams | KeywordIndexParams) -> bool:
    if type(current) is not type(wanted) or getattr(current, "memory", None) != wanted.memory:
        return False
    linked = getattr(current, "enable_hnsw", None)  # None: the engine's default, linked
    if (linked is None or bool(linked)) != bool(wanted.enable_hnsw):
        return False
    if isinstance(wanted, KeywordIndexParams):
        return bool(getattr(current, "is_tenant", None)) == bool(wanted.is_tenant)
    return getattr(current, "lookup", None) == wanted.lookup


def _load(path: Path, config: EdgeConfig) -> EdgeShard:
    try:
        return EdgeShard.load(str(path), config)
    except Exception as exc:  # the binding raises a bare Exception; the WAL lock is the one case callers handle
        if "WouldBlock" in str(exc):
            raise MirrorInUse(f"the Qdrant Edge shard {path} is open in another process ({exc})") from exc
        raise


def as_of_filter(collection: str, where: AsOfFilter) -> Filter:
    """The as-of view in Qdrant Edge's filter model (integer payloads compare with float bounds: days and epoch
    milliseconds are exact in a double)."""
    must: list[FieldCondition] = [
        FieldCondition(key=DAY_FIELD[collection], range=RangeFloat(lte=where.day)),
        FieldCondition(key="ingested_ms", range=RangeFloat(lte=where.ingested_ms)),
    ]
    if where.entity_id:
        must.append(FieldCondition(key="entity_ids", match=MatchValue(where.entity_id)))
    if where.variant and collection == INTERACTIONS:
        must.append(FieldCondition(key="variant", match=MatchValue(where.variant)))
    return Filter(must=list(must))


def _payload(record: Record) -> Payload:
    payload = record.payload  # converted on every access: read once
    if payload is None:
        raise ValueError(f"point {record.id} came back without its payload")
    return payload


def _dense(vector: Vector | None, point: PointId) -> list[float]:
    """The point's one unnamed dense vector (the only kind these shards hold). Read `.vector` once: the binding
    converts it to Python floats on every access."""
    # The first value tells a dense vector from a multivector; checking all 384 would cost a request ~2 ms.
    if not isinstance(vector, list) or not vector or not isinstance(vector[0], float):
        raise ValueError(f"point {point}: expected one unnamed dense vector")
    return cast(list[float], vector)
