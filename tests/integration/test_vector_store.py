"""The mirror contract (graph/mirror/base.py), held for both adapters on their real engines: Qdrant Edge (the
embedded default) and qdrant-client, here in local mode (the production server speaks the same client API; no
Qdrant server binary exists on these machines). No graph server: the mirror alone, in a folder of the test's."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import threading
import time
from collections import Counter
from itertools import product
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from qdrant_edge import Query, QueryRequest, SearchParams

from newskg.core.settings import Settings
from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, AsOfFilter, Payload, VectorMirror
from newskg.graph.mirror.edge import EdgeMirror
from newskg.wiring import NotConfigured, new_mirror, open_mirror
from tests.support.cli import REPO
from tests.support.graph_world import MIRROR_ENGINES

pytestmark = pytest.mark.integration

DIM = 8
DAYS = [20230801 + d for d in range(10)]
ENTITIES = ["e_doja", "e_rca", "e_wintour"]


class HashEmbedder:
    """A text's vector from its hash: deterministic, and any text's vector is known to the test."""

    name, dim = "hash-8", DIM

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [vector_of(t).tolist() for t in texts]


def vector_of(text: str) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    v = np.random.default_rng(seed).standard_normal(DIM)
    return v / np.linalg.norm(v)


def fact(n: int) -> Payload:
    """Interaction-shaped payload n: a day, an ingestion instant, one entity and a variant, spread over n."""
    return {
        "graph_id": f"i{n}",
        "text": f"fact number {n}",
        "published_day": DAYS[n % len(DAYS)],
        "event_day": DAYS[n % len(DAYS)],
        "ingested_ms": 1_000 + n,
        "ingested_at": str(1_000 + n),
        "entity_ids": [ENTITIES[n % len(ENTITIES)]],
        "variant": "M0" if n % 4 else "M1",
        "confidence": 0.5,
    }


def settings_for(folder: Path, engine: str) -> Settings:
    return Settings(data_dir=folder, mirror_engine=engine, _env_file=None)  # pyright: ignore[reportCallIssue]


@pytest.fixture(params=MIRROR_ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def mirror(engine: str, tmp_path: Path):
    opened = open_mirror(settings_for(tmp_path, engine), HashEmbedder())
    try:
        yield opened
    finally:
        opened.close()


def visible(n: int, where: AsOfFilter) -> bool:
    p = fact(n)
    return (
        p["published_day"] <= where.day
        and p["ingested_ms"] <= where.ingested_ms
        and (where.entity_id is None or where.entity_id in p["entity_ids"])
        and (where.variant is None or p["variant"] == where.variant)
    )


def test_upserts_are_idempotent_and_the_as_of_filter_bounds_day_ingestion_entity_and_variant(mirror: VectorMirror):
    facts = [fact(n) for n in range(300)]
    assert mirror.upsert(INTERACTIONS, facts) == 300
    mirror.upsert(INTERACTIONS, facts)  # the same ids again: the same points
    assert mirror.count(INTERACTIONS) == 300 and mirror.count(CHUNKS) == 0
    query = vector_of("fact number 97")
    for where in (
        AsOfFilter(day=DAYS[4], ingested_ms=1_200),
        AsOfFilter(day=DAYS[9], ingested_ms=1_150, entity_id="e_rca"),
        AsOfFilter(day=DAYS[7], ingested_ms=2_000, entity_id="e_rca", variant="M0"),
        AsOfFilter(day=DAYS[0] - 1, ingested_ms=2_000),  # before every fact
    ):
        hits = mirror.search_vector(INTERACTIONS, query.tolist(), where, limit=300)
        assert {h.graph_id for h in hits} == {f"i{n}" for n in range(300) if visible(n, where)}, where
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        best = sorted((-float(vector_of(f"fact number {n}") @ query), f"i{n}") for n in range(300) if visible(n, where))
        assert [h.graph_id for h in hits[:3]] == [i for _, i in best[:3]], where
    own = mirror.search(INTERACTIONS, "fact number 97", AsOfFilter(day=DAYS[9], ingested_ms=2_000), limit=1)
    assert own[0].graph_id == "i97" and own[0].score == pytest.approx(1.0, abs=1e-5)
    assert own[0].payload["text"] == "fact number 97" and own[0].payload["mirrored_ms"] > 0


def test_reads_page_through_every_point_and_return_only_what_exists(mirror: VectorMirror):
    mirror.upsert(INTERACTIONS, [fact(n) for n in range(2_500)])  # more than two scroll pages
    times = mirror.time_payloads(INTERACTIONS)
    assert len(times) == 2_500 and mirror.graph_ids(INTERACTIONS) == {f"i{n}" for n in range(2_500)}
    assert {k: times["i7"][k] for k in ("published_day", "ingested_ms", "confidence")} == {
        "published_day": DAYS[7],
        "ingested_ms": 1_007,
        "confidence": 0.5,
    }
    assert "text" not in times["i7"]  # only the fields asked for
    vectors = mirror.vectors(INTERACTIONS, ["i1", "i2", "missing"])
    assert set(vectors) == {"i1", "i2"}
    assert np.allclose(vectors["i1"], vector_of("fact number 1"), atol=1e-6)  # stored unit-length
    assert [p["graph_id"] for p in mirror.payloads(INTERACTIONS, ["i3", "missing"])] == ["i3"]
    assert mirror.vectors(CHUNKS, ["i1"]) == {} and mirror.payloads(CHUNKS, []) == []


def test_deletes_remove_only_points_written_before_the_scan(mirror: VectorMirror):
    mirror.upsert(INTERACTIONS, [fact(n) for n in range(4)])
    legacy = fact(9) | {"graph_id": "legacy"}  # written before `mirrored_ms` existed: counts as old
    mirror.upsert_vectors(INTERACTIONS, [(legacy, vector_of("legacy").tolist())])
    started = int(time.time() * 1000) + 1
    time.sleep(0.01)
    mirror.upsert(INTERACTIONS, [fact(1)])  # rewritten after the scan began
    mirror.delete_if_older(INTERACTIONS, ["i0", "i1", "legacy", "missing"], started)
    assert mirror.graph_ids(INTERACTIONS) == {"i1", "i2", "i3"}
    mirror.delete(INTERACTIONS, ["i2", "missing"])
    assert mirror.graph_ids(INTERACTIONS) == {"i1", "i3"} and mirror.count(INTERACTIONS) == 2


def test_the_mirror_persists_and_one_process_opens_its_folder(engine: str, tmp_path: Path):
    """Both embedded engines admit one process per folder (Qdrant Edge locks its WAL; without a WAL it takes no
    lock, and an open shard does not see another process's writes). A second opener, in this process or another,
    gets NotConfigured naming the fix; after close the folder opens again with everything in it."""
    settings = settings_for(tmp_path, engine)
    first = open_mirror(settings, HashEmbedder())
    first.upsert(INTERACTIONS, [fact(n) for n in range(50)])
    try:
        with pytest.raises(NotConfigured, match="in use by another newskg process"):
            open_mirror(settings, HashEmbedder())
        other = subprocess.run(
            [sys.executable, "-c", OPEN_IN_ANOTHER_PROCESS, str(tmp_path), engine],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert other.returncode == 3, other.stdout + other.stderr
    finally:
        first.close()
    again = open_mirror(settings, HashEmbedder())
    try:
        assert again.count(INTERACTIONS) == 50
        again.ensure()  # idempotent on an existing folder
        assert again.count(INTERACTIONS) == 50
    finally:
        again.close()


OPEN_IN_ANOTHER_PROCESS = """
import sys
from pathlib import Path
from typing import Any
from newskg.core.settings import Settings
from newskg.wiring import NotConfigured, open_mirror
from tests.integration.test_vector_store import HashEmbedder
try:
    open_mirror(Settings(data_dir=Path(sys.argv[1]), mirror_engine=sys.argv[2], _env_file=None), HashEmbedder())
except NotConfigured as exc:
    print(exc)
    sys.exit(3)
"""


def test_a_reader_that_embeds_nothing_sees_an_empty_mirror_before_any_write(engine: str, tmp_path: Path):
    """The chaos tests' snapshot opens the mirror without an embedder: nothing is created, nothing embedded."""
    reader = new_mirror(settings_for(tmp_path, engine), HashEmbedder())
    try:
        assert reader.time_payloads(INTERACTIONS) == {} and reader.count(CHUNKS) == 0
    finally:
        reader.close()


def test_searches_run_beside_a_writer_thread(mirror: VectorMirror):
    """`serve --pipeline`: the API's threads search while the stage's thread writes the same mirror."""
    mirror.upsert(INTERACTIONS, [fact(n) for n in range(200)])
    errors: list[BaseException] = []
    where = AsOfFilter(day=DAYS[9], ingested_ms=10_000, entity_id="e_doja")

    def write() -> None:
        try:
            for start in range(200, 1_000, 100):
                mirror.upsert(INTERACTIONS, [fact(n) for n in range(start, start + 100)])
        except BaseException as exc:
            errors.append(exc)

    def read() -> None:
        try:
            for n in range(100):
                assert mirror.search_vector(INTERACTIONS, vector_of(f"fact number {n}").tolist(), where, limit=5)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write)] + [threading.Thread(target=read) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and mirror.count(INTERACTIONS) == 1_000


def test_edge_builds_its_index_once_enough_points_are_unindexed_and_answers_the_same(tmp_path: Path):
    """Qdrant Edge runs no background optimizer: writes land in a segment searched exactly, and the adapter builds
    HNSW when `index_after` points are unindexed (and on optimize(), after bulk loads and reconcile)."""
    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder(), index_after=500)
    mirror.ensure()
    try:
        query, where = vector_of("fact number 3").tolist(), AsOfFilter(day=DAYS[9], ingested_ms=10_000)
        mirror.upsert(INTERACTIONS, [fact(n) for n in range(400)])
        assert unindexed(mirror) == 400
        exact = [h.graph_id for h in mirror.search_vector(INTERACTIONS, query, where, limit=5)]
        mirror.upsert(INTERACTIONS, [fact(n) for n in range(400, 600)])  # 600 unindexed ≥ 500: the write indexes
        assert unindexed(mirror) == 0
        indexed = [h.graph_id for h in mirror.search_vector(INTERACTIONS, query, where, limit=5)]
        assert indexed[0] == exact[0] == "i3"
        assert mirror.payloads(INTERACTIONS, ["i599"])[0]["published_day"] == DAYS[599 % len(DAYS)]
    finally:
        mirror.close()


def test_inside_bulk_edge_builds_its_index_once_when_the_block_ends(tmp_path: Path):
    """Issue 30: a bulk load (the QA bench's, reconcile's rebuild) past `index_after` points builds HNSW once, at the
    end, not every `index_after` points (each build re-indexed every point so far); inside, writes are searchable."""
    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder(), index_after=200)
    mirror.ensure()
    try:
        with mirror.bulk():
            for start in range(0, 700, 100):
                mirror.upsert(INTERACTIONS, [fact(n) for n in range(start, start + 100)])
            assert unindexed(mirror) == 700  # no build on the way
            where = AsOfFilter(day=DAYS[9], ingested_ms=10_000)
            hits = mirror.search_vector(INTERACTIONS, vector_of("fact number 3").tolist(), where, limit=1)
            assert hits[0].graph_id == "i3"
        assert unindexed(mirror) == 0  # built when the block ended
    finally:
        mirror.close()


def unindexed(mirror: EdgeMirror) -> int:
    shard = mirror._shard(INTERACTIONS)  # the engine's own count: what this test is about
    assert shard is not None
    info = shard.info()
    return info.points_count - info.indexed_vectors_count


def test_edge_keeps_its_payload_indexes_on_disk_and_moves_older_ones_there(tmp_path: Path):
    """Issue 30: the payload indexes are on disk, the integer ones range-only (every filter on them is a range): in
    RAM they held ~64 MB of the QA API at 20k interactions. Those a QA search checks on every point it scans are read
    into the page cache at load (edge.FILTERED_MEMORY: Cached), the others are read as used (Cold); no field has
    HNSW links of its own (edge.HNSW). A shard whose indexes were made in RAM with every field linked (before this)
    has them rebuilt by the next ensure(), and its filtered searches answer the same."""
    from qdrant_edge import EdgeShard, Memory, PayloadSchemaType, UpdateOperation

    from newskg.graph.mirror.edge import index_params

    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder())
    mirror.ensure()
    mirror.upsert(INTERACTIONS, [fact(n) for n in range(50)])
    query, where = vector_of("fact number 3").tolist(), AsOfFilter(day=DAYS[5], ingested_ms=10_000, entity_id="e_rca")
    before = [(h.graph_id, h.score) for h in mirror.search_vector(INTERACTIONS, query, where, limit=5)]
    mirror.close()
    old = EdgeShard.load(str(mirror.path(INTERACTIONS)))  # as ensure() made them before: the engine's default, RAM
    for field in ("published_day", "entity_ids"):
        old.update(UpdateOperation.delete_field_index(field))
        kind = PayloadSchemaType.Integer if field == "published_day" else PayloadSchemaType.Keyword
        old.update(UpdateOperation.create_field_index(field, kind))
    old.flush()
    old.close()
    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder())
    mirror.ensure()
    try:
        schema = index_schema(mirror)
        assert set(schema) == set(index_params(INTERACTIONS))
        for field, params in schema.items():
            checked = field in ("entity_ids", "variant", "ingested_ms", "published_day")
            wanted = Memory.Cached if checked else Memory.Cold
            assert params.memory == wanted, field  # on disk; the ones every QA search checks read in at load
            assert getattr(params, "lookup", False) is False, field  # integers: the range index only
            assert params.enable_hnsw is False, field  # no graph (edge.HNSW): no links of its own
        assert [(h.graph_id, h.score) for h in mirror.search_vector(INTERACTIONS, query, where, limit=5)] == before
    finally:
        mirror.close()


def index_schema(mirror: EdgeMirror) -> dict[str, Any]:
    shard = mirror._shard(INTERACTIONS)  # pyright: ignore[reportPrivateUsage]
    assert shard is not None
    return {field: info.params for field, info in shard.info().payload_schema.items()}


def test_edge_builds_no_graph_and_returns_the_exact_top_k_with_or_without_an_entity(tmp_path: Path):
    """Issue 30, what the 1 M step relies on (edge.py, HNSW and QUANTIZATION): a shard with no HNSW graph, its
    vectors on disk and an int8 copy of them in RAM, searched over the copy and rescored. A hub's, a rare entity's and
    an unfiltered search find the top k of the cosines computed here from the vectors written."""
    from newskg.graph.mirror import edge

    hub_points = 2_500
    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder(), index_after=100)
    mirror.ensure()
    points = [hub_fact(n, hub_points) for n in range(hub_points + 300)]
    try:
        with mirror.bulk():
            mirror.upsert_vectors(INTERACTIONS, points)
        assert unindexed(mirror) == 0  # optimized: no graph links (m and payload_m 0), the vectors on disk
        assert [(i["m"], i["payload_m"]) for i in segment_indexes(mirror)] == [(0, 0)]
        assert vector_storage(mirror) == {"Mmap"}
        assert int8_copies(mirror) == [{"type": "int8", "quantile": 0.99, "memory": "pinned"}]
        assert edge.search_params(mirror.path(INTERACTIONS)) is edge.QUANTIZED_SEARCH
        rng = np.random.default_rng(3)
        for entity in ("e_hub", "e_rare_900", None):
            where = AsOfFilter(day=DAYS[9], ingested_ms=10**9, entity_id=entity)
            for query in rng.standard_normal((20, DIM)):
                unit = query / np.linalg.norm(query)
                hits = mirror.search_vector(INTERACTIONS, unit.tolist(), where, limit=10)
                assert_exact_top(hits, unit, [(p, v) for p, v in points if entity in (None, *p["entity_ids"])])
    finally:
        mirror.close()


def test_edge_scans_its_int8_copy_and_reads_only_the_rescored_vectors_from_disk(tmp_path: Path):
    """Issue 30, edge.QUANTIZATION: every kind of search scans the int8 copy in RAM and rescores the best few by
    their float32 vectors, so a question about an entity not asked before maps few pages of the vector file (the
    API's RSS and a cold question's cost grew with every page the exact scan touched): a hub as of its last day (the
    time ranges checked here), as of its first (read again), before almost all of it was ingested (the whole filter)
    and an as-of filter without an entity. The same searches forced exact (edge.SEARCH) map most of the file: the
    measure sees the difference. The hits are the exact top k either way, with the float32 cosines as scores. 384-d,
    as MiniLM's: the int8 rounding is that of the real vectors'."""
    from newskg.graph.mirror import edge

    hub_points, dim = 20_000, 384
    rng = np.random.default_rng(5)
    vectors = rng.standard_normal((hub_points, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    points = [(hub_fact(n, hub_points)[0], vectors[n].tolist()) for n in range(hub_points)]
    folder = tmp_path / "edge"
    built = EdgeMirror(folder, Wide(dim), index_after=hub_points)
    built.ensure()
    with built.bulk():
        built.upsert_vectors(INTERACTIONS, points)
    built.close()
    searches = {
        "last day": AsOfFilter(day=DAYS[9], ingested_ms=10**9, entity_id="e_hub"),
        "first day": AsOfFilter(day=DAYS[0], ingested_ms=10**9, entity_id="e_hub"),
        "barely ingested": AsOfFilter(day=DAYS[9], ingested_ms=1_000 + 300, entity_id="e_hub"),
        "no entity": AsOfFilter(day=DAYS[4], ingested_ms=10**9),
    }
    queries = [q / np.linalg.norm(q) for q in rng.standard_normal((5, dim)).astype(np.float32)]
    file_kb = hub_points * dim * 4 / 1024  # 30,000 KB
    for name, where in searches.items():
        visible = [(p, v) for p, v in points if in_view(p, where)]
        mapped = {}
        for way in ("int8", "exact"):
            mirror = EdgeMirror(folder, Wide(dim), index_after=hub_points)  # a fresh load: nothing mapped yet
            mirror.ensure()
            if way == "exact":
                mirror._search[INTERACTIONS] = edge.SEARCH  # pyright: ignore[reportPrivateUsage]
            try:
                assert vector_files_mapped_kb(folder) < 1_000
                for query in queries:
                    hits = mirror.search_vector(INTERACTIONS, query.tolist(), where, limit=10)
                    assert_exact_top(hits, query, visible)
                mapped[way] = vector_files_mapped_kb(folder)
            finally:
                mirror.close()
        assert mapped["int8"] < 0.3 * file_kb, (name, mapped)
        assert mapped["exact"] > 0.8 * file_kb * len(visible) / hub_points, (name, mapped)


def in_view(payload: Payload, where: AsOfFilter) -> bool:
    """The as-of filter, on a payload the test wrote."""
    entity = where.entity_id is None or where.entity_id in payload["entity_ids"]
    return entity and payload["published_day"] <= where.day and payload["ingested_ms"] <= where.ingested_ms


class Wide(HashEmbedder):
    """HashEmbedder's kind for vectors the test writes itself, of another size."""

    def __init__(self, dim: int):
        self.dim = dim


def vector_files_mapped_kb(folder: Path) -> int:
    """KB of this process's resident pages of the shards' float32 vector files (matrix.dat), from /proc/self/smaps."""
    resident, in_file = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and fields[0].endswith(":") is False and len(fields) >= 5:  # a mapping's header line
            in_file = fields[-1].startswith(str(folder)) and fields[-1].endswith("matrix.dat")
        elif fields[:1] == ["Rss:"] and in_file:
            resident += int(fields[1])
    return resident


OLDER_LAYOUTS = {
    "global graph": ({"m": 16, "ef_construct": 100, "full_scan_threshold": 10}, "Pinned"),
    "no int8 copy": ({"m": 0, "ef_construct": 100, "full_scan_threshold": 10_000, "payload_m": 0}, "Cold"),
}


@pytest.mark.parametrize("layout", sorted(OLDER_LAYOUTS))
def test_edge_answers_from_a_shard_of_an_older_layout_as_it_is(tmp_path: Path, layout: str):
    """A shard made before this layout loads with its own config, as the engine requires, and is searched exactly:
    one with a global HNSW graph and its vectors in RAM (before the graph was dropped), and one without the int8
    copy (before edge.QUANTIZATION), which edge.search_params reads from its config file."""
    from qdrant_edge import HnswIndexConfig, Memory

    from newskg.graph.mirror import edge

    folder = tmp_path / "edge"
    hnsw, memory = OLDER_LAYOUTS[layout]
    saved = edge.HNSW, edge.VECTOR_MEMORY, edge.QUANTIZATION
    edge.HNSW, edge.VECTOR_MEMORY, edge.QUANTIZATION = HnswIndexConfig(**hnsw), getattr(Memory, memory), None
    try:
        old = EdgeMirror(folder, HashEmbedder(), index_after=100)
        old.ensure()
        with old.bulk():
            old.upsert(INTERACTIONS, [fact(n) for n in range(600)])
        old.close()
    finally:
        edge.HNSW, edge.VECTOR_MEMORY, edge.QUANTIZATION = saved
    mirror = EdgeMirror(folder, HashEmbedder(), index_after=100)
    mirror.ensure()
    try:
        assert [i["m"] for i in segment_indexes(mirror)] == [hnsw["m"]]
        assert (vector_storage(mirror) == {"Mmap"}) is (memory == "Cold")
        assert edge.search_params(mirror.path(INTERACTIONS)) is edge.SEARCH  # exact: its graph is never used
        assert mirror._search[INTERACTIONS] is edge.SEARCH  # pyright: ignore[reportPrivateUsage]  # what searches use
        where = AsOfFilter(day=DAYS[9], ingested_ms=10_000, entity_id="e_doja")
        query = vector_of("fact number 3")
        hits = mirror.search_vector(INTERACTIONS, query.tolist(), where, limit=10)
        doja = [(fact(n), vector_of(f"fact number {n}").tolist()) for n in range(600) if n % len(ENTITIES) == 0]
        assert hits[0].graph_id == "i3"
        assert_exact_top(hits, query, doja)
    finally:
        mirror.close()


def hub_fact(n: int, hub_points: int) -> tuple[Payload, list[float]]:
    """Point n of a shard with one hub entity (the first hub_points) and rare ones of 3 points each, random vectors."""
    payload = fact(n) | {"entity_ids": ["e_hub" if n < hub_points else f"e_rare_{n // 3}"]}
    return payload, vector_of(f"point {n}").tolist()


def assert_exact_top(hits: list[Any], query: np.ndarray, candidates: list[tuple[Payload, list[float]]]) -> None:
    """The hits are the top len(hits) of the candidates by cosine to the query (scores within float32's rounding)."""
    cosine = {str(p["graph_id"]): float(np.dot(query, v)) for p, v in candidates}
    assert len(hits) == min(10, len(cosine)) > 0
    for h in hits:
        assert abs(h.score - cosine[h.graph_id]) < 1e-5, h.graph_id
    left_out = max((c for i, c in cosine.items() if i not in {h.graph_id for h in hits}), default=-1.0)
    assert min(cosine[h.graph_id] for h in hits) >= left_out - 1e-6


def vector_storage(mirror: EdgeMirror) -> set[str]:
    """The vector storage type of the shard's optimized segments, as the engine wrote it (segment.json)."""
    import json

    configs = [json.loads(c.read_text()) for c in (mirror.path(INTERACTIONS) / "segments").glob("*/segment.json")]
    return {
        str(c["config"]["vector_data"][""]["storage_type"])
        for c in configs
        if c["config"]["vector_data"][""]["index"]["type"] == "hnsw"
    }


def int8_copies(mirror: EdgeMirror) -> list[dict[str, Any]]:
    """The scalar quantization of each optimized segment of the shard, as the engine wrote it (segment.json)."""
    import json

    found = []
    for config in sorted((mirror.path(INTERACTIONS) / "segments").glob("*/segment.json")):
        vectors = json.loads(config.read_text())["config"]["vector_data"][""]
        if vectors["index"]["type"] == "hnsw":
            found.append((vectors.get("quantization_config") or {}).get("scalar"))
    return found


def segment_indexes(mirror: EdgeMirror) -> list[dict[str, Any]]:
    """The vector index options of each segment of the shard with a graph, as the engine wrote them (segment.json)."""
    import json

    found = []
    for config in sorted((mirror.path(INTERACTIONS) / "segments").glob("*/segment.json")):
        index = json.loads(config.read_text())["config"]["vector_data"][""]["index"]
        if index["type"] == "hnsw":
            found.append(index["options"])
    return found


@pytest.mark.parametrize("slack", [1.5, 0.3])  # as shipped; and too small, so that second reads fall short too
def test_edge_an_entitys_nearest_checked_by_time_here_are_the_whole_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slack: float
):
    """edge.OVERSAMPLE: the search of an entity of CHECKED_FROM points or more reads its nearest by the entity (and
    variant) alone and checks the time ranges on their payloads; when too few pass, a second, larger read as the
    share that passed asks (edge.second_read); the engine's whole filter runs only when that is none or too few pass
    again, or for a smaller entity. Every way the hits (ids, scores, payloads) equal the whole filter's, as of every
    day and ingestion bound, the bounds met exactly too: for a hub as of a late day (checked here), an earlier one
    (a second read), a bound few of its points meet (the whole filter again) and a rare entity (the whole filter at
    once), with a second read that falls short too when the slack is too small."""
    from newskg.graph.mirror import edge

    monkeypatch.setattr(edge, "SECOND_READ_SLACK", slack)

    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder(), index_after=100)
    mirror.ensure()
    points = [hub_fact(n, 900) for n in range(960)]
    checked: list[bool] = []  # per entity search: were the time ranges checked here (or the whole filter run)
    entity_nearest = edge._entity_nearest  # pyright: ignore[reportPrivateUsage]

    def recorded(*args: Any) -> Any:
        found = entity_nearest(*args)
        checked.append(found is not None)
        return found

    second_reads: list[int | None] = []  # per entity search: the second reads it asked for (None: the whole filter)
    second_read = edge.second_read

    def recorded_second(*args: Any) -> int | None:
        second_reads.append(second_read(*args))
        return second_reads[-1]

    monkeypatch.setattr(edge, "_entity_nearest", recorded)
    monkeypatch.setattr(edge, "second_read", recorded_second)
    monkeypatch.setattr(edge, "CHECKED_FROM", 100)  # the hub's 900 points: checked here; the rare one's 3: not
    try:
        with mirror.bulk():
            mirror.upsert_vectors(INTERACTIONS, points)
        shard = mirror._shard(INTERACTIONS)  # pyright: ignore[reportPrivateUsage]
        assert shard is not None
        rng = np.random.default_rng(9)
        paths: Counter[str] = Counter()

        def whole_filter(query: list[float], where: AsOfFilter) -> list[tuple[Any, float]]:
            request = QueryRequest(
                limit=10,
                query=Query.Nearest(query),
                filter=edge.as_of_filter(INTERACTIONS, where),
                with_payload=["graph_id", "ingested_ms", "published_day", "text"],
                params=SearchParams(exact=True),
            )
            return [(p.payload, p.score) for p in shard.query(request)]

        for entity, day, variant in product(("e_hub", "e_rare_310"), DAYS, (None, "M0")):
            unit = rng.standard_normal(DIM)
            query = (unit / np.linalg.norm(unit)).tolist()
            unbounded = whole_filter(query, AsOfFilter(day=day, ingested_ms=10**9, entity_id=entity, variant=variant))
            at_hits = [int(p["ingested_ms"]) for p, _ in unbounded[:3]]  # bounds a hit is exactly at
            for ingested in (1_000 + 17, 10**9, *at_hits):
                where = AsOfFilter(day=day, ingested_ms=ingested, entity_id=entity, variant=variant)
                checked.clear()
                second_reads.clear()
                hits = mirror.search_vector(INTERACTIONS, query, where, 10, ["text", "published_day", "ingested_ms"])
                assert [(h.payload, h.score) for h in hits] == whole_filter(query, where), (entity, day, ingested)
                read_again = any(second_reads)
                here = "here after a second read" if read_again else "here"
                whole = "whole filter after a second read" if read_again else "whole filter"
                paths[f"{entity} {here if checked == [True] else whole}"] += 1
        assert paths["e_hub here"] > 20 and paths["e_hub whole filter"] > 5, paths
        assert paths["e_hub here after a second read" if slack > 1 else "e_hub whole filter after a second read"] > 5
        assert paths["e_rare_310 whole filter"] > 60 and paths["e_rare_310 here"] == 0, paths
    finally:
        mirror.close()


def test_edge_a_second_read_is_as_many_as_the_share_that_passed_asks_within_its_bounds():
    from newskg.graph.mirror.edge import second_read

    assert [second_read(40, passed, 10) for passed in (0, 1, 2)] == [None, None, None]  # too few to guess a share
    assert second_read(40, 4, 10) == 150 and second_read(40, 3, 10) is None  # 10 in ~100, half again; 200 > 16 x 10
    assert second_read(80, 8, 20) == 300 and second_read(80, 7, 20) is None  # 343: over 16 x 20
    assert second_read(400, 60, 100) == 1_000 and second_read(400, 50, 100) is None  # 1,200: over 1,024 points


def test_edge_an_entitys_point_with_a_time_that_is_no_integer_passes_no_range_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """The engine's integer index holds no float or string time, so its whole filter never passes such a point;
    edge.in_time, checking the ranges here, must not either (a reviewer's finding)."""
    from newskg.graph.mirror import edge

    monkeypatch.setattr(edge, "CHECKED_FROM", 1)
    mirror = EdgeMirror(tmp_path / "edge", HashEmbedder(), index_after=100)
    mirror.ensure()
    odd: list[Any] = [float(DAYS[0]), str(DAYS[0]), True]
    points = [
        (
            fact(n) | {"entity_ids": ["e_hub"], "published_day": odd[n % 3] if n % 4 == 0 else DAYS[0]},
            vector_of(f"p{n}").tolist(),
        )
        for n in range(120)
    ]
    try:
        with mirror.bulk():
            mirror.upsert_vectors(INTERACTIONS, points)
        where = AsOfFilter(day=DAYS[9], ingested_ms=10**9, entity_id="e_hub")
        query = vector_of("p8").tolist()  # p8's published_day is a float: the nearest point, yet never a hit
        hits = mirror.search_vector(INTERACTIONS, query, where, limit=10)
        assert len(hits) == 10 and all(isinstance(h.payload["published_day"], int) for h in hits)
        assert not any(isinstance(h.payload["published_day"], bool) for h in hits)
    finally:
        mirror.close()
