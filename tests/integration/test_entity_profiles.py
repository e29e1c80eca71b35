"""An entity's visibility profile (reads.ENTITY_PROFILES) read from the daily counts the writer keeps (EntityDay,
FactDay: graph/store/factdays.py) instead of walking every mention and fact: on the real FalkorDB it gives exactly
what the walk gave and what ENTITIES_AS_OF counts, for every day and both views, whatever order the records
arrived in (late ingestion, a fact and a chunk re-dated by an earlier record, redelivery, mentions written in a
later batch, a chunk re-dated in a batch without its mentions); the read walks no edge; `graph init` gives an older
graph the counts the write path keeps."""

from __future__ import annotations

import time
from itertools import product
from typing import Any

import pytest

from newskg.core.ids import entity_id
from newskg.core.records import Chunk, Entity
from newskg.core.timeaxes import day_iso
from newskg.graph.store import explore, factdays, reads
from newskg.graph.store.asof import KNOWLEDGE, AsOf
from newskg.graph.store.mentions import ingested_day
from newskg.graph.store.rows import EntityAsOf, EntityCounts, EntityProfileRow, rows_of
from newskg.graph.store.schema import FACT_DAYS_INDEX, _has_index  # pyright: ignore[reportPrivateUsage]
from newskg.graph.store.store import GraphStore
from newskg.qa.query import EntityProfile
from newskg.wiring import open_graph
from tests.support.isolation import Isolated
from tests.support.records import CHOUPETTE, DOJA, ENTITIES, dated_chunk, stated_by

pytestmark = pytest.mark.integration

DOJA_E, CHOUPETTE_E = ENTITIES
KARL = Entity(id=entity_id("Karl Lagerfeld", "PERSON"), name="Karl Lagerfeld", type="PERSON")
NOBODY = Entity(id=entity_id("Nobody", "PERSON"), name="Nobody", type="PERSON")  # never written: no OBJECT edge
PEOPLE = [DOJA_E, CHOUPETTE_E, KARL]

# The walk ENTITY_PROFILES replaced, kept as the oracle: every mentioning chunk and every fact grouped by
# (publication day, ingestion instant).
WALKED_PROFILES = """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, c.day AS day, c.ingested_ms AS ms, count(DISTINCT c) AS n
WITH e, collect(CASE WHEN day IS NOT NULL AND ms IS NOT NULL AND n > 0 THEN [day, ms, n] END) AS chunk_cells
OPTIONAL MATCH (e)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH e, chunk_cells, x.published_day AS day, x.ingested_ms AS ms, count(DISTINCT x) AS n
WITH e, chunk_cells,
     collect(CASE WHEN day IS NOT NULL AND ms IS NOT NULL AND n > 0 THEN [day, ms, n] END) AS interaction_cells
RETURN e.id AS id, e.name AS name, e.type AS type, chunk_cells, interaction_cells
"""
CELLS = """
MATCH (d) WHERE d:EntityDay OR d:FactDay
RETURN labels(d)[0] AS label, d.id AS id, d.entity_id AS entity, d.day AS day, d.ingested_day AS ingested_day,
       coalesce(d.chunks, d.facts) AS n
ORDER BY label, id
"""
DAYS = [20230428 + d for d in range(3)] + [20230501 + d for d in range(14)] + [99991231]


def redated(chunk: Chunk, day: int, article_id: str, days_earlier: int) -> Chunk:
    """Another record of the same chunk text: published on `day` in another article, ingested earlier."""
    return chunk.model_copy(
        update={
            "day": day,
            "published": f"{day_iso(day)}T08:00:00Z",
            "article_id": article_id,
            "article_ids": [article_id],
            "ingested_ms": chunk.ingested_ms - days_earlier * 86_400_000,
        }
    )


def scenario() -> list[dict[str, Any]]:
    """Batches of one stream: late ingestion, re-dating records, mentions in a later batch, a fact whose object
    is no entity of the graph, a chunk re-dated by a record sent without its mentions."""
    c1 = dated_chunk("Doja Cat dressed as Choupette at the Met Gala.", 20230501)
    c2 = dated_chunk("Doja Cat said Choupette inspired her.", 20230503, "beta", ingested_day=20230505)  # late
    c3 = dated_chunk("Doja Cat thanked Karl Lagerfeld's estate.", 20230510, "gamma")
    c4 = redated(c3, 20230507, "a_d", days_earlier=3)
    c1_early = redated(c1, 20230430, "a_e", days_earlier=1)
    c2_early = redated(c2, 20230502, "a_f", days_earlier=3)
    f1 = stated_by(c1, DOJA_E, CHOUPETTE_E, "Doja Cat dressed as Choupette", 20230501)
    f2 = stated_by(c2, DOJA_E, CHOUPETTE_E, "Doja Cat was inspired by Choupette", 20230503)
    f3 = stated_by(c3, DOJA_E, KARL, "Doja Cat thanked Karl Lagerfeld", 20230506)
    f3_early = stated_by(c4, DOJA_E, KARL, "Doja Cat thanked Karl Lagerfeld", 20230506)  # same fact, visible earlier
    f4 = stated_by(c3, KARL, NOBODY, "Karl Lagerfeld's estate met Nobody", 20230510)
    assert f3.id == f3_early.id and f3_early.published_day < f3.published_day
    b1 = {
        "chunks": [c1, c2],
        "entities": PEOPLE,
        "mentions": [(c1.id, DOJA), (c1.id, CHOUPETTE), (c2.id, DOJA)],
        "interactions": [f1, f2],
    }
    b2 = {
        "chunks": [c3],
        "entities": PEOPLE,
        "mentions": [(c3.id, DOJA), (c3.id, KARL.id), (c2.id, CHOUPETTE)],
        "interactions": [f3, f4],
    }
    b3 = {
        "chunks": [c4, c1_early],
        "entities": PEOPLE,
        "mentions": [(c1.id, DOJA), (c1.id, CHOUPETTE)],
        "interactions": [f3_early],
    }
    b4 = {"chunks": [c2_early]}  # its mentions are in the graph already: only the chunk is re-dated
    return [b1, b2, b3, b2, b4]  # b2 twice: a redelivery after the fact was re-dated


KARL_ID = KARL.id


def written(isolated: Isolated, name: str, batches: list[dict[str, Any]]) -> GraphStore:
    store = GraphStore(open_graph(isolated.graph_named(name).settings))
    store.init()
    for batch in batches:
        store.write_batch(**batch)
    return store


def one_batch(batches: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for batch in batches:
        for key, value in batch.items():
            merged[key] = [*merged.get(key, []), *value]
    return merged


def profiles(store: GraphStore) -> dict[str, EntityProfile]:
    rows = rows_of(EntityProfileRow, store.conn.read(reads.ENTITY_PROFILES, {"ids": [e.id for e in PEOPLE]}))
    return {r.id: EntityProfile.of_row(r) for r in rows}


def walked_profiles(store: GraphStore) -> dict[str, EntityProfile]:
    """The oracle's profiles: its cells carry each item's ingestion instant itself, not its ingestion day."""
    rows = rows_of(EntityProfileRow, store.conn.read(WALKED_PROFILES, {"ids": [e.id for e in PEOPLE]}))
    return {r.id: EntityProfile(r.id, r.name, r.type, tuple(r.chunk_cells), tuple(r.interaction_cells)) for r in rows}


def as_of_counts(store: GraphStore, as_of: AsOf) -> dict[str, EntityCounts]:
    rows = store.conn.read(reads.ENTITIES_AS_OF, {"ids": [e.id for e in PEOPLE], **as_of.params()})
    return {
        str(r["id"]): EntityCounts(
            str(r["id"]), str(r["name"]), str(r["type"]), int(r["mentions"]), int(r["interactions"])
        )
        for r in rows
    }


def assert_profiles_exact(store: GraphStore) -> None:
    kept, walked = profiles(store), walked_profiles(store)
    assert set(kept) == set(walked) == {e.id for e in PEOPLE}
    for (day, knowledge), entity in product(product(DAYS, KNOWLEDGE), PEOPLE):
        as_of = AsOf(day, knowledge)
        expected = as_of_counts(store, as_of).get(entity.id)
        assert kept[entity.id].as_of(as_of) == walked[entity.id].as_of(as_of) == expected, (entity.name, as_of)
        # the reads that sum the cells in Cypher (reads.ENTITY_VISIBLE_BY_DAYS): the explorer's focus, the lookup
        summed = [EntityCounts(n.id, n.name, n.type, n.mentions, n.interactions) for n in nodes(store, entity, as_of)]
        assert summed == ([expected] if expected else []), (entity.name, as_of)
        found = [(e.id, e.mentions, e.interactions) for e in store.find_entities(entity.name, as_of=as_of)]
        assert found == ([(entity.id, expected.mentions, expected.interactions)] if expected else []), as_of


def nodes(store: GraphStore, entity: Entity, as_of: AsOf) -> list[EntityAsOf]:
    return explore.nodes(store, [entity.id], as_of)


def cells(store: GraphStore) -> list[dict[str, Any]]:
    """The counts' cells that count something (a mention cell counted down to 0 stays, as before: harmless)."""
    return [dict(r) for r in store.conn.read(CELLS) if r["n"]]


def test_the_profile_from_the_daily_counts_is_the_walks_in_every_write_order(isolated: Isolated):
    batches = scenario()
    stores = {
        "forward": written(isolated, "forward", batches),
        "backward": written(isolated, "backward", batches[::-1]),
        "together": written(isolated, "together", [one_batch(batches)]),
    }
    try:
        found = {name: cells(store) for name, store in stores.items()}
        assert found["forward"] == found["backward"] == found["together"]
        facts = [c for c in found["forward"] if c["label"] == "FactDay"]
        # f3 re-dated to May 7 (ingested May 7): its May 10 cells are gone, not kept at 0
        assert {(c["entity"], c["day"], c["ingested_day"], c["n"]) for c in facts if c["entity"] == KARL_ID} == {
            (KARL_ID, 20230507, 20230507, 1),
            (KARL_ID, 20230510, 20230510, 1),  # f4, whose object is no entity
        }
        assert not store_zero_fact_cells(stores["forward"])
        for store in stores.values():
            assert_profiles_exact(store)
    finally:
        for store in stores.values():
            store.conn.drop()
            store.conn.close()


def store_zero_fact_cells(store: GraphStore) -> list[object]:
    return [r["id"] for r in store.conn.read("MATCH (d:FactDay) WHERE d.facts <= 0 RETURN d.id AS id")]


def test_the_profile_read_walks_no_edge(isolated: Isolated):
    store = written(isolated, "plan", scenario())
    try:
        plan = "\n".join(store.conn.execute_command("GRAPH.EXPLAIN", store.conn.graph_name, reads.ENTITY_PROFILES))
        assert "Traverse" not in plan and "Expand" not in plan, plan
        scans = [line.strip() for line in plan.splitlines() if "Node By Index Scan" in line]
        assert scans == [
            f"Node By Index Scan | ({v}:{label})"
            for v, label in (("e", "Entity"), ("d", "EntityDay"), ("f", "FactDay"))
        ]
    finally:
        store.conn.drop()
        store.conn.close()


def dropped(store: GraphStore, label: str, prop: str) -> None:
    """Wait until FalkorDB has dropped the index: it rebuilds a label's index in the background, listing the old
    one until then."""
    deadline = time.monotonic() + 30
    while _has_index(store.conn, label, prop):
        assert time.monotonic() < deadline, f"the index on {label}.{prop} is still there"
        time.sleep(0.05)


FACT_KEYS = """
MATCH (x:Interaction)
RETURN x.id AS id, x.ingested_day AS ingested_day, x.subject_cell AS s, x.object_cell AS o, x.counted AS counted
ORDER BY id
"""


def test_init_gives_a_graph_written_before_the_fact_counts_what_the_write_path_keeps(isolated: Isolated):
    """An older graph has no ingestion day or cell keys on its interactions, no FactDay and none of their indexes:
    init fills the keys from the times and edges, counts every cell, and makes the indexes, the FactDay entity
    index last (a crash before it runs the backfill again); the graph then holds what the write path leaves."""
    store = written(isolated, "older", scenario())
    try:
        keys, counted = store.conn.read(FACT_KEYS), cells(store)
        assert all(r["s"] and r["ingested_day"] and r["counted"] for r in keys)
        for prop in ("ingested_day", "subject_cell", "object_cell", "counted"):  # one per statement
            store.conn.run(f"MATCH (x:Interaction) SET x.{prop} = null")
        store.conn.run("MATCH (d:FactDay) DELETE d")
        for label, prop in (("Interaction", "subject_cell"), ("Interaction", "object_cell"), ("FactDay", "entity_id")):
            store.conn.run(f"DROP INDEX FOR (n:{label}) ON (n.{prop})")
        dropped(store, *FACT_DAYS_INDEX)
        created = store.init()
        assert "CREATE INDEX FOR (n:FactDay) ON (n.entity_id)" in created
        assert store.conn.read(FACT_KEYS) == keys and cells(store) == counted
        assert store.init() == []
        assert_profiles_exact(store)
    finally:
        store.conn.drop()
        store.conn.close()


def test_the_backfilled_ingestion_day_is_the_write_paths_for_any_instant(isolated: Isolated):
    """factdays.BACKFILL_INGESTED_DAY computes in Cypher what the writer computes in Python (mentions.ingested_day),
    across month, leap-year and century ends."""
    instants = [0, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999, 1_684_195_199_999, 4_102_444_800_000]
    instants += [(k * 7_919_999_987) % 5_000_000_000_000 for k in range(1, 2000)]
    store = GraphStore(open_graph(isolated.graph_named("days").settings))
    try:
        rows = [{"id": str(n), "ms": ms} for n, ms in enumerate(instants)]
        store.conn.run("UNWIND $rows AS r CREATE (:Interaction {id: r.id, ingested_ms: r.ms})", {"rows": rows})
        store.conn.run(factdays.BACKFILL_INGESTED_DAY)
        found = store.conn.read("MATCH (x:Interaction) RETURN x.ingested_ms AS ms, x.ingested_day AS day")
        assert len(found) == len(instants) and all(r["day"] == ingested_day(int(r["ms"])) for r in found)
    finally:
        store.conn.drop()
        store.conn.close()
