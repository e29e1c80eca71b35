"""The mirror on Qdrant Edge (PyPI qdrant-edge-py, pinned: beta): the Qdrant engine in process, one `EdgeShard`
per collection in its own folder (`<root>/<prefix><collection>`), with a write-ahead log, vectors on disk and an
int8 copy of them in RAM, searched by a scan of that copy rescored by the vectors (no HNSW graph: HNSW's and
QUANTIZATION's comments say why), and payload indexes on the fields the as-of filters and reconcile use (integer
times, keyword ids).

What this adapter relies on, each pinned by tests/integration/test_vector_store.py and test_edge_kill.py:
- One process opens a shard at a time: a second `EdgeShard.load` fails on the WAL's lock ("Can't init WAL:
  WouldBlock"), raised here as MirrorInUse. (Without a WAL there is no lock, and an open shard does not see
  another process's writes: not a way to share it.)
- Every `update` is in the WAL before it returns, so a kill -9 loses nothing acknowledged: the next load replays
  the WAL. A shard that does not load is rebuilt from the graph (`graph reconcile`): it is derived data.
- Edge runs no background optimizer: points land in an appendable segment, and `optimize()` turns it into an
  immutable one (and would build a graph, if a shard of an older config has one). It holds the GIL for its whole
  run, so it runs only after a write leaves `index_after` points unoptimized (not inside `bulk()`, which runs it
  once at its end), after bulk loads and in reconcile, never per query.
- `flush()` costs 50–120 ms (it syncs the segment files); the WAL already makes a write durable against a crash,
  so flushes are spaced (FLUSH_EVERY_S) to keep the WAL replay at the next load short."""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeGuard, cast

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
    QuantizationSearchParams,
    Query,
    QueryRequest,
    RangeFloat,
    Record,
    ScalarQuantizationConfig,
    ScalarType,
    ScoredPoint,
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
# The payload indexes live on disk, not in RAM (the engine's default), and the integer fields have only their range
# index: every filter on them is a range (as_of_filter, delete_if_older). In RAM, the two collections' indexes held
# ~64 MB of the QA API's 20k-interaction process (load 208 → 140 MB, bench/qa.py's shard) for the same search CPU
# (0.25-0.29 ms, 2,000 filtered searches): RSS the API's issue-30 budget (512 MB at 20k) did not have. The indexes a
# QA search checks on every point it scans (the entity, the two as-of times, the variant: FILTERED_ON) are Cached:
# on disk, read into the page cache when the shard loads. Left Cold, a search for an entity not asked before faulted
# their pages in one by one: ~370 page reads a question at 1 M facts, 24 ms wall (3.7 ms Cached), and the process's
# first hundred questions cost 34 ms wall each against 11.5 (2026-11-28, bench/qa.py's 1 M shard, int8 copy on both
# sides). Cached adds their files to the RSS at load: ~225 MB at 1 M facts (835 → 1,059 MB), ~5 MB at 20k. The
# other indexes (ids, sources, event day, mirrored_ms: reconcile's and the deletes') stay Cold.
INDEX_MEMORY = Memory.Cold
FILTERED_MEMORY = Memory.Cached
FILTERED_ON = frozenset({"entity_ids", "variant", "ingested_ms", *DAY_FIELD.values()})
# No HNSW graph (m=0, and no field gets links of its own): every search scans the points its filter passes, which the
# payload indexes find (over the int8 copy, rescored: QUANTIZATION). Every QA vector search is filtered by one entity
# (qa/retrieve.py), and an entity's exact scan beats the graph a shard at scale needs (bench/edge_hnsw.py, three layouts
# at 100k points of random 384-d vectors in one run, 2026-11-28): the global graph with links per filtered field took
# 228 CPU-s to build and found a hub's top 10 at recall 0.94; Qdrant's multitenancy layout (a subgraph per entity) 30
# CPU-s at 0.98, but 0.72 at 1 M points (hnsw_ef 128); no graph 18 CPU-s at recall 1.0, a hub's search (2,000-7,000
# facts) at p50 3.4 ms (13 ms for the busiest, 43k facts, at 1 M). Edge runs no background optimizer, so a graph would
# be built inside the process that writes (the API's sync, reconcile), holding the GIL: over an hour for the QA bench's
# 1.2 M points. The cost moves to searches without an entity (IRB's dense retrieval, the `generic` strategy, reconcile's
# text search): a scan, ~2 ms unfiltered and ~12 ms with an as-of filter at 100k points over the int8 copy (~7 and ~40
# over the float32 vectors), ~0.46 s as of a day at 1 M. A Qdrant server (graph/mirror/qdrant.py) keeps its graph, built
# by its own optimizer: the production choice when those searches matter at scale. A shard made before this layout keeps
# its own config (its graph, its vectors in RAM) and answers the same, searched exactly (SEARCH); deleting its folder
# and `graph reconcile` rebuild it in this one.
HNSW = HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10_000, payload_m=0)
SEARCH = SearchParams(exact=True)  # a shard without the int8 copy: a scan of its float32 vectors
# An entity's exact scan checks each of its points against the as-of time ranges, ~0.25 us a range a point: the busiest
# hub of the QA bench's 1 M facts (43k of them) took 28-30 ms with the whole filter, 9 ms by the entity alone with 4x
# the limit (2026-11-28, one-off, Qdrant Edge 0.9.0). Questions are mostly asked as of a recent day, when most of an
# entity's points pass: so its nearest are first read by the entity (and variant) alone, OVERSAMPLE x limit of them with
# their two time fields only, and the ranges checked here (in_time). The first `limit` that pass are the exact top, as
# the whole filter's are, up to the int8 scan's recall (1.0 measured, rescored by the same vectors; the order among
# equal scores, e.g. of two facts of one text, is the engine's, as in any of its searches), and so are all that pass
# when the entity has no more points than were read; otherwise a second read (below), then the whole filter. The kept
# points' payloads and vectors are then read by id: the binding converts each one it returns, kept or not.
OVERSAMPLE = 4
# When few of those pass (a hub asked as of its first weeks: the 43k hub of the 1 M bench shard as of its 10th-20th
# day took ~21 ms p50, the first read then the whole filter), the share that passed says how many nearest hold `limit`
# in time: a second read of SECOND_READ_SLACK x that many, if no more than SECOND_READ_MOST x limit (each point read is
# converted by the binding, and twice as many float32 vectors read to rescore), answered in 4.7-5.6 ms p50 with the
# same hits (2026-11-28, 30 queries a day). A larger cap (24, 32 x limit) also took its 8th day (~21 -> 7 ms) but
# doubled its 5th (28 -> 43-54 ms): reads of 500-640 points that fall short, their vectors first read from disk. The
# bench's vectors are random, so there a point's time says nothing of its nearness; in real news the nearest may be
# older or newer than the rest, the share a rougher guess, and more second reads fall short. The whole filter runs when
# fewer than SECOND_READ_FROM passed, more would be needed, or the second read falls short too.
SECOND_READ_SLACK = 1.5
SECOND_READ_MOST = 16  # x limit
SECOND_READ_POINTS = 1_024  # and never more points: the whole filter's cost grows with the entity, not with limit
SECOND_READ_FROM = 3  # points passed: from fewer the share is too rough a guess (a read that falls short costs both)
CHECKED_FROM = 5_000  # points of the entity: a smaller one's whole filter is a few ms at most, one call
# The vectors stay on disk (Cold: mapped, read through the page cache) like the payload indexes: only the pages of the
# vectors rescored (QUANTIZATION) are resident, not all 1.8 GB of the QA bench's 1.2 M points (its API's peak RSS was
# 2.9 GB with them in RAM). Float16 would halve them but moves cosines by ~1e-4, which the mirror contract (the same
# scores from both adapters) does not allow.
VECTOR_MEMORY = Memory.Cold
# A copy of each vector in int8 (384 bytes) is held in RAM, and searches scan it, then rescore the best
# RESCORE_OVERSAMPLING x limit of them by their float32 vectors: the scores returned are exact, and only those few
# vectors are read from disk. Scanning the float32 vectors on disk faulted in every page of an entity's points the first
# time it was asked about (a 1 M hub: 43k points on ~40k pages), which made a question about an entity not asked before
# cost tens of ms and the API's RSS grow with every entity asked. The int8 scan can rank a true top-k point below the
# cut where it and others are within its rounding (up to ~4e-3 in cosine, measured): with 2x oversampling, recall@10
# against the exact search was 1.0 on 200 queries each for hubs, ~1,000-fact and rare entities and the as-of filter
# alone, on the QA bench's 1 M random vectors (0.94-0.96 with none; 1.0 with 4x too), random vectors being the worst
# case (their top scores are the closest), and recall@20 1.0 through this adapter on 400 hub questions as of days
# across the timeline. 2x, not 4x: each vector rescored is a page read from the file, and a page the API keeps
# mapped. Over 3,000 answers at 1 M (half hybrid, in process, 2026-11-28) 4x left 297 MB of the file resident and
# cost 5.5 ms of CPU an answer, 2x 223 MB and 4.9 ms. At 1 M a hybrid answer's mirror reads took 30 ms of CPU in a
# fresh process before the copy, 3.5 ms with it (4x); the copy holds ~450 MB of RAM for 1.2 M points. Only a shard
# created with QUANTIZATION is searched so (its config file says): an older one is searched exactly, as before
# (search_params).
QUANTIZATION: ScalarQuantizationConfig | None = ScalarQuantizationConfig(
    ScalarType.Int8, quantile=0.99, memory=Memory.Pinned
)
RESCORE_OVERSAMPLING = 2.0
# exact=False on a shard without a graph is the scan that uses the int8 copy (exact=True ignores it).
QUANTIZED_SEARCH = SearchParams(quantization=QuantizationSearchParams(rescore=True, oversampling=RESCORE_OVERSAMPLING))


class EdgeMirror(VectorMirror):
    def __init__(self, root: Path, embedder: Embedder, prefix: str = "newskg_", index_after: int = 20_000):
        super().__init__(embedder, prefix)
        self.root = root
        self.index_after = index_after
        self._shards: dict[str, EdgeShard] = {}
        self._search: dict[str, SearchParams] = {}  # collection → how its shard is searched (search_params)
        self._flushed: dict[str, float] = {}  # collection → when its shard was last flushed (monotonic)
        self._bulk = False  # inside bulk(): the index is built when the block ends

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
                if field in indexed:  # a shard from before INDEX_MEMORY, FILTERED_MEMORY or HNSW: rebuilt once
                    log.info("Qdrant Edge shard %s: payload index %s rebuilt", self.path(collection), field)
                    shard.update(UpdateOperation.delete_field_index(field))
                shard.update(UpdateOperation.create_field_index(field, params))

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
        wanted, params = with_graph_id(fields), self._search[collection]
        if where is not None and where.entity_id:
            checked = _entity_nearest(shard, collection, list(vector), where, limit, params)
            hits = _hits_by_id(shard, checked, wanted, with_vectors) if checked is not None else None
            if hits is not None:
                return hits
        request = QueryRequest(
            limit=limit,
            query=Query.Nearest(list(vector)),
            filter=as_of_filter(collection, where) if where else None,
            with_payload=wanted,
            with_vector=with_vectors,
            params=params,
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
            shard = _load(self.path(collection))
            self._search[collection] = search_params(self.path(collection))  # before the shard is seen as open
            self._shards[collection] = shard
        return shard

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

    def _create(self, collection: str) -> EdgeShard:
        # The engine's own indexing threshold (KB of vectors) set to `index_after` points, so optimize() indexes
        # exactly when _after_write asks it to.
        threshold_kb = max(1, self.index_after * self.embedder.dim * 4 // 1024)
        config = EdgeConfig(
            vectors=EdgeVectorParams(
                size=self.embedder.dim, distance=Distance.Cosine, memory=VECTOR_MEMORY, quantization_config=QUANTIZATION
            ),
            hnsw_config=HNSW,
            optimizers=EdgeOptimizersConfig(indexing_threshold=threshold_kb),
            max_search_threads=SEARCH_THREADS,  # kept in the shard's edge_config.json: every later load has it
        )
        self.path(collection).mkdir(parents=True, exist_ok=True)
        shard = EdgeShard.create(str(self.path(collection)), config)
        self._search[collection] = search_params(self.path(collection))
        self._shards[collection] = shard
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


def index_params(collection: str) -> dict[str, IntegerIndexParams | KeywordIndexParams]:
    """The payload index of each field the filters and reconcile use, as this adapter creates it (INDEX_MEMORY,
    FILTERED_MEMORY)."""
    params: dict[str, IntegerIndexParams | KeywordIndexParams] = {
        field: IntegerIndexParams(lookup=False, range=True, memory=index_memory(field), enable_hnsw=False)
        for field in INTEGER_FIELDS[collection]
    }
    return params | {
        field: KeywordIndexParams(memory=index_memory(field), enable_hnsw=False) for field in KEYWORD_FIELDS[collection]
    }


def index_memory(field: str) -> Memory:
    return FILTERED_MEMORY if field in FILTERED_ON else INDEX_MEMORY


def _same_index(current: object, wanted: IntegerIndexParams | KeywordIndexParams) -> bool:
    if type(current) is not type(wanted) or getattr(current, "memory", None) != wanted.memory:
        return False
    linked = getattr(current, "enable_hnsw", None)  # None: the engine's default, linked
    if (linked is None or bool(linked)) != bool(wanted.enable_hnsw):
        return False
    return not isinstance(wanted, IntegerIndexParams) or getattr(current, "lookup", None) == wanted.lookup


def _load(path: Path) -> EdgeShard:
    try:
        return EdgeShard.load(str(path))
    except Exception as exc:  # the binding raises a bare Exception; the WAL lock is the one case callers handle
        if "WouldBlock" in str(exc):
            raise MirrorInUse(f"the Qdrant Edge shard {path} is open in another process ({exc})") from exc
        raise


def search_params(path: Path) -> SearchParams:
    """How a shard is searched, from the config it was created with (CONFIG_FILE): over its int8 copy, rescored,
    when it has one (QUANTIZATION); otherwise exactly over its vectors (an older shard's graph is never used)."""
    config = json.loads((path / CONFIG_FILE).read_text())
    quantized = any(v.get("quantization_config") for v in config.get("vectors", {}).values())
    return QUANTIZED_SEARCH if quantized else SEARCH


def as_of_filter(collection: str, where: AsOfFilter, times: bool = True) -> Filter:
    """The as-of view in Qdrant Edge's filter model (integer payloads compare with float bounds: days and epoch
    milliseconds are exact in a double); `times=False`: its entity and variant alone (_entity_nearest)."""
    must: list[FieldCondition] = []
    if times:
        must.append(FieldCondition(key=DAY_FIELD[collection], range=RangeFloat(lte=where.day)))
        must.append(FieldCondition(key="ingested_ms", range=RangeFloat(lte=where.ingested_ms)))
    if where.entity_id:
        must.append(FieldCondition(key="entity_ids", match=MatchValue(where.entity_id)))
    if where.variant and collection == INTERACTIONS:
        must.append(FieldCondition(key="variant", match=MatchValue(where.variant)))
    return Filter(must=list(must))


def in_time(collection: str, where: AsOfFilter, payload: Payload) -> bool:
    """as_of_filter's time ranges, checked on a payload that carries the two fields: as the engine's integer index
    does, a value that is not an integer (a float, a string) passes no range."""
    day, ingested = payload.get(DAY_FIELD[collection]), payload.get("ingested_ms")
    return _integer(day) and _integer(ingested) and day <= where.day and ingested <= where.ingested_ms


def _integer(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _entity_nearest(
    shard: EdgeShard, collection: str, vector: list[float], where: AsOfFilter, limit: int, params: SearchParams
) -> list[ScoredPoint] | None:
    """The entity's `limit` nearest as of the filter's time (OVERSAMPLE's comment), read by the entity alone with
    their time fields only, the ranges checked here; None when too few of the first OVERSAMPLE x limit pass and the
    share that did asks for no second read (second_read), or that one falls short too."""
    by_entity = as_of_filter(collection, where, times=False)
    if shard.count(CountRequest(filter=by_entity, exact=False)) < CHECKED_FROM:  # the index's count: ~0.1 ms
        return None

    def nearest_in_time(read: int) -> tuple[list[ScoredPoint], bool]:
        """The entity's `read` nearest, those in time, and whether they settle the search: `limit` passed, or the
        entity has no more points than were read."""
        request = QueryRequest(
            limit=read,
            query=Query.Nearest(vector),
            filter=by_entity,
            with_payload=[DAY_FIELD[collection], "ingested_ms"],
            params=params,
        )
        head = shard.query(request)
        passed = [p for p in head if in_time(collection, where, _payload(p))]
        return passed, len(passed) >= limit or len(head) < read

    read = limit * OVERSAMPLE
    passed, settled = nearest_in_time(read)
    if not settled and (more := second_read(read, len(passed), limit)) is not None:  # at most one larger read
        passed, settled = nearest_in_time(more)
    return passed[:limit] if settled else None


def second_read(read: int, passed: int, limit: int) -> int | None:
    """How many of the entity's nearest to read again when `passed` of the first `read` were in time, fewer than
    `limit`: SECOND_READ_SLACK x what that share predicts `limit` needs; None (the whole filter instead) when fewer
    than SECOND_READ_FROM passed, or that is over SECOND_READ_MOST x limit or SECOND_READ_POINTS."""
    if passed < SECOND_READ_FROM:
        return None
    wanted = math.ceil(read * limit / passed * SECOND_READ_SLACK)
    return wanted if wanted <= min(SECOND_READ_MOST * limit, SECOND_READ_POINTS) else None


def _hits_by_id(
    shard: EdgeShard, found: list[ScoredPoint], wanted: list[str] | bool, vectors: bool
) -> list[MirrorHit] | None:
    """The hits of points found by a search that read no payload of theirs: payloads (and vectors) by id, in one
    call for the few kept rather than for every point the search read. None when one was deleted in between: the
    caller searches again."""
    records = {str(r.id): r for r in shard.retrieve([p.id for p in found], with_payload=wanted, with_vector=vectors)}
    if len(records) < len(found):
        return None
    kept = [(records[str(p.id)], p.score) for p in found]
    return [hit(r.payload, score, _dense(r.vector, r.id) if vectors else None) for r, score in kept]


def _payload(record: Record | ScoredPoint) -> Payload:
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
