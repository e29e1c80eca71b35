"""The mirror agrees with the graph (issue 11, item 4), on the real FalkorDB server and each mirror engine (Qdrant
Edge, qdrant-client local mode): payload times are the graph's first publication and first ingestion whatever
order the records arrive in, reconcile repairs differing payload times, and reconcile never deletes a point a stage
wrote after its scan began."""

import time

import pytest

from newskg.core.records import Chunk, Interaction
from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, TIME_FIELDS, VectorMirror
from newskg.graph.mirror.reconcile import reconcile
from newskg.graph.mirror.sync import mirror_from_graph
from newskg.graph.store.store import GraphStore
from newskg.graph.store.times import graph_times
from newskg.wiring import new_mirror, open_graph
from tests.support.articles import write_jsonl
from tests.support.cli import newskg_json
from tests.support.graph_world import MIRROR_ENGINES
from tests.support.records import DOJA, ENTITIES, doja_and_choupette
from tests.support.records import dated_chunk as chunk

pytestmark = pytest.mark.integration
over_engines = pytest.mark.parametrize("world", MIRROR_ENGINES, indirect=True)


def met_gala(c: Chunk) -> Interaction:
    return doja_and_choupette(c, "Doja Cat dressed as Choupette", 20230501)  # the same fact (same id) in any chunk


def stage_write(store: GraphStore, mirror: VectorMirror, chunks: list[Chunk], interactions: list[Interaction]):
    """What the extract stage does per batch: the graph write, then the mirror from the graph."""
    store.write_batch(
        chunks=chunks,
        entities=ENTITIES,
        mentions=[(c.id, e.id) for c in chunks for e in ENTITIES],
        interactions=interactions,
    )
    mirror_from_graph(store, mirror, [i.id for i in interactions], [c.id for c in chunks])


def overwrite(mirror: VectorMirror, collection: str, graph_id: str, fields: dict[str, int]) -> None:
    """Rewrite these payload fields of one point through the mirror's bulk path (its vector kept)."""
    payload = mirror.payloads(collection, [graph_id])[0]
    mirror.upsert_vectors(collection, [(payload | fields, mirror.vectors(collection, [graph_id])[graph_id])])


def assert_mirror_equals_graph(store: GraphStore, mirror: VectorMirror) -> None:
    for collection, label in ((INTERACTIONS, "Interaction"), (CHUNKS, "Chunk")):
        graph, payloads = graph_times(store, label), mirror.time_payloads(collection)
        assert graph.keys() == payloads.keys()
        for graph_id, node in graph.items():
            assert {f: payloads[graph_id][f] for f in TIME_FIELDS[collection]} == {
                f: node[f] for f in TIME_FIELDS[collection]
            }, (collection, graph_id)


@over_engines
def test_out_of_order_backfill_keeps_first_times_in_graph_and_mirror(world):
    store, mirror = world.store, world.mirror
    late = chunk("Doja Cat dressed as Choupette, the Met Gala recap says.", 20230520, "gamma", 20230520)
    early = chunk("Doja Cat dressed as Choupette at the Met Gala on May 1.", 20230502, "alpha", 20230503)
    stage_write(store, mirror, [late], [met_gala(late)])  # the later report arrives first ...
    stage_write(store, mirror, [early], [met_gala(early)])  # ... the backfill of the earlier one after it
    node = store.conn.read(
        "MATCH (x:Interaction) RETURN x.published_day AS p, x.ingested_ms AS ms, "
        "x.published_iso AS iso, x.ingested_at AS at"
    )
    assert node == [{"p": 20230502, "ms": early.ingested_ms, "iso": "2023-05-02", "at": early.ingested_at}]
    assert_mirror_equals_graph(store, mirror)
    payload = mirror.payloads(INTERACTIONS, [met_gala(early).id])[0]
    assert sorted(payload["chunk_ids"]) == sorted([early.id, late.id])  # both chunks are its evidence

    # The same chunk text re-dated by a backfill (two records, one id): later first, then earlier.
    text = "Choupette was named after a Lagerfeld muse, the archive shows."
    store_late, store_early = chunk(text, 20230601, "delta", 20230601), chunk(text, 20230515, "epsilon", 20230602)
    stage_write(store, mirror, [store_late], [])
    stage_write(store, mirror, [store_early], [])
    node = store.conn.read(
        "MATCH (c:Chunk {id: $id}) RETURN c.day AS day, c.ingested_ms AS ms, c.article_id AS article",
        {"id": store_late.id},
    )[0]
    # Delta (published and ingested June 1) was visible first; epsilon's May 15 date was only known on June 2.
    # The node keeps delta whole: mixing epsilon's day with delta's ingestion would date the chunk May 15 as of
    # June 1, a day when no record said so.
    assert node == {"day": 20230601, "ms": store_late.ingested_ms, "article": store_late.article_id}
    assert_mirror_equals_graph(store, mirror)


@over_engines
def test_a_backfilled_fact_is_not_dated_by_one_record_and_ingested_by_another(world):
    """The live report (published and ingested June 1) is visible first; the backfill that re-dates the same fact
    to May 15 arrives on June 2. As of June 1 the fact shows with June 1, never with the backfill's May 15."""
    store, mirror = world.store, world.mirror
    live = chunk("Doja Cat dressed as Choupette, the June recap says.", 20230601, "delta", 20230601)
    backfill = chunk("Doja Cat dressed as Choupette, the May archive says.", 20230515, "epsilon", 20230602)
    stage_write(store, mirror, [live], [met_gala(live)])
    stage_write(store, mirror, [backfill], [met_gala(backfill)])
    node = store.conn.read("MATCH (x:Interaction) RETURN x.published_day AS p, x.ingested_ms AS ms")
    assert node == [{"p": 20230601, "ms": live.ingested_ms}]
    assert_mirror_equals_graph(store, mirror)


@over_engines
def test_the_same_fact_twice_in_one_batch_keeps_both_chunks_and_the_first_times(world):
    store, mirror = world.store, world.mirror
    a = chunk("On May 1 Doja Cat dressed as Choupette. Fans cheered.", 20230503, "alpha", 20230504)
    b = chunk("Fans cheered. On May 1 Doja Cat dressed as Choupette.", 20230502, "beta", 20230502)
    stage_write(store, mirror, [a, b], [met_gala(a), met_gala(b)])
    rows = store.conn.read(
        "MATCH (x:Interaction)-[:EVIDENCE]->(c:Chunk) RETURN x.published_day AS p, c.id AS c ORDER BY c"
    )
    assert sorted(r["c"] for r in rows) == sorted([a.id, b.id]) and {r["p"] for r in rows} == {20230502}
    assert_mirror_equals_graph(store, mirror)


def test_the_stage_mirrors_the_graph_times_after_an_out_of_order_backfill(isolated, embedder, tmp_path):
    """End to end through the real broker, process and extract stages: the later article is ingested (and
    extracted) first, the earlier one afterwards; both state the same dated fact."""
    settings, env = isolated.settings, isolated.env
    fact = "On May 1, 2023, Doja Cat thanked Karl Lagerfeld in New York."
    later = {
        "url": "https://gamma.example/recap",
        "published": "2023-05-20",
        "source": "gamma",
        "text": "The season recap looked back at the spring. " + fact + " Critics argued about the theme for "
        "weeks. Sales of cat costumes rose sharply afterwards.",
    }
    earlier = {
        "url": "https://alpha.example/gala",
        "published": "2023-05-02",
        "source": "alpha",
        "text": fact + " The singer wore a prosthetic face. Photographers crowded the steps of the "
        "museum. The dinner ended after midnight.",
    }
    for n, row in enumerate((later, earlier)):
        newskg_json("ingest", "files", write_jsonl(tmp_path / f"{n}.jsonl", [row]), "--backfill", env=env)
        newskg_json("run", "all", "--until-idle", env=env)
    store = GraphStore(open_graph(settings))
    thanked = store.conn.read(
        "MATCH (x:Interaction) WHERE x.text CONTAINS 'thanked' RETURN x.id AS id, x.published_day AS p"
    )
    assert thanked and all(r["p"] == 20230502 for r in thanked)
    mirror = new_mirror(settings, embedder)  # the engine the stages ran on: the default
    try:
        assert_mirror_equals_graph(store, mirror)
    finally:
        mirror.close()


@over_engines
def test_reconcile_repairs_a_payload_time_that_differs_from_the_graph(world):
    store, mirror = world.store, world.mirror
    early = chunk("Doja Cat dressed as Choupette at the Met Gala on May 1.", 20230502, "alpha", 20230503)
    stage_write(store, mirror, [early], [met_gala(early)])
    # A mirror written by the old code: the last write's times, not the graph's first ones.
    overwrite(mirror, INTERACTIONS, met_gala(early).id, {"published_day": 20230520, "ingested_ms": 1})
    overwrite(mirror, CHUNKS, early.id, {"day": 20230520})
    reports = {r.collection: r for r in reconcile(store, mirror)}
    assert reports[INTERACTIONS].times_repaired == 1 and reports[CHUNKS].times_repaired == 1
    assert reports[INTERACTIONS].deleted_from_mirror == reports[CHUNKS].deleted_from_mirror == 0
    assert_mirror_equals_graph(store, mirror)
    again = {r.collection: r for r in reconcile(store, mirror)}
    assert again[INTERACTIONS].times_repaired == again[CHUNKS].times_repaired == 0


@over_engines
def test_reconcile_never_deletes_what_a_stage_wrote_after_its_scan_began(world):
    store, mirror = world.store, world.mirror
    first = chunk("Doja Cat dressed as Choupette at the Met Gala on May 1.", 20230502, "alpha", 20230503)
    stage_write(store, mirror, [first], [met_gala(first)])
    arriving = chunk("Choupette watched the gala from Paris, her owner said.", 20230503, "beta", 20230503)

    # A stage commits a chunk (graph, then mirror) the moment reconcile has read the graph's chunks.
    read = store.conn.read
    fired = []

    def read_then_stage_writes(query, params=None):
        rows = read(query, params)
        if not fired and "(n:Chunk)" in query:
            fired.append(query)
            store.write_batch(chunks=[arriving], entities=ENTITIES, mentions=[(arriving.id, DOJA)])
            mirror.upsert_chunks([(arriving, [DOJA])])
        return rows

    store.conn.read = read_then_stage_writes
    try:
        reconcile(store, mirror)
    finally:
        store.conn.read = read
    assert fired
    assert arriving.id in mirror.graph_ids(CHUNKS)  # the stage's point survived
    assert mirror.count(CHUNKS) == store.counts()["chunks"] == 2

    # An orphan (in the mirror only) last written after the scan began is kept; one written before is deleted.
    before = chunk("An orphan from a lost graph write.", 20230504, "gamma", 20230504)
    mirror.upsert_chunks([(before, [])])
    started = int(time.time() * 1000) + 1
    time.sleep(0.01)
    after = chunk("A chunk a stage upserted while reconcile ran.", 20230504, "gamma", 20230504)
    mirror.upsert_chunks([(after, [])])
    report = {r.collection: r for r in reconcile(store, mirror, started_ms=started)}[CHUNKS]
    assert report.deleted_from_mirror == 1 and report.kept_written_after_scan == 1
    assert after.id in mirror.graph_ids(CHUNKS) and before.id not in mirror.graph_ids(CHUNKS)
