"""The graph store and its mirror on the real FalkorDB server and the default mirror engine (Qdrant Edge):
idempotent batches, three time axes and as-of reads, reconcile after a crash between the two writes (on each mirror
engine), the Browser queries over Bolt, and the graph CLI."""

import json

import pytest

from newskg.core.ids import source_id
from newskg.core.records import ChunkSighting
from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.browser import saved_queries
from newskg.graph.connection import connect_graph
from newskg.graph.mirror.base import CHUNKS, INTERACTIONS
from newskg.graph.mirror.reconcile import reconcile
from newskg.graph.store.store import GraphStore
from newskg.services.state import ServiceState
from newskg.wiring import open_graph
from tests.support.cli import LocalStack, newskg, newskg_json
from tests.support.graph_dump import graph_dump
from tests.support.graph_world import MIRROR_ENGINES
from tests.support.records import CHOUPETTE, DOJA, ENTITIES
from tests.support.records import dated_chunk as chunk
from tests.support.records import doja_and_choupette as interaction

pytestmark = pytest.mark.integration


def batch_one():
    c1 = chunk("Doja Cat dressed as Choupette at the Met Gala.", 20230502, "alpha", 20230502)
    c2 = chunk("Doja Cat said Choupette inspired her costume.", 20230503, "beta", 20230503)
    return [c1, c2], [
        interaction(c1, "Doja Cat dressed as Choupette", 20230501),
        interaction(c2, "Doja Cat was inspired by Choupette", 20230503),
    ]


def write(store, mirror, chunks, interactions, sightings=()):
    mentions = [(c.id, e.id) for c in chunks for e in ENTITIES]
    store.write_batch(
        chunks=chunks, sightings=sightings, entities=ENTITIES, mentions=mentions, interactions=interactions
    )
    if mirror:
        mirror.upsert_chunks([(c, [DOJA, CHOUPETTE]) for c in chunks])
        mirror.upsert_interactions(interactions)


def test_same_batch_twice_changes_no_count(world):
    store, mirror = world.store, world.mirror
    chunks, interactions = batch_one()
    write(store, mirror, chunks, interactions)
    counts = store.counts()
    assert counts == {"sources": 2, "articles": 2, "chunks": 2, "entities": 2, "interactions": 2}
    mirrored = (mirror.count(INTERACTIONS), mirror.count(CHUNKS))
    write(store, mirror, chunks, interactions)
    assert store.counts() == counts and (mirror.count(INTERACTIONS), mirror.count(CHUNKS)) == mirrored == (2, 2)
    with store.conn as conn:
        edges = conn.read("MATCH ()-[r]->() RETURN type(r) AS t, count(r) AS n ORDER BY t")
    assert {e["t"]: e["n"] for e in edges} == {
        "ALIAS": 1,  # Doja Cat's "Doja": an (:Alias) node, written once
        "EVIDENCE": 2,
        "FROM": 2,
        "IN": 2,
        "MENTIONS": 4,
        "OBJECT": 2,
        "SUBJECT_OF": 2,
    }


def test_three_time_axes_and_as_of_reads(world):
    store, mirror = world.store, world.mirror
    chunks, interactions = batch_one()
    write(store, mirror, chunks, interactions)
    late = chunk("Weeks later Doja Cat adopted a cat named after Choupette.", 20230520, "gamma", 20230521)
    write(store, mirror, [late], [interaction(late, "Doja Cat adopted a cat named after Choupette", 20230520)])
    # A near-duplicate of the first chunk, reported by a fourth source on May 25, ingested May 26.
    first = chunks[0]
    store.write_batch(
        sightings=[
            ChunkSighting(
                chunk_id=first.id,
                article_id="a_delta",
                source="delta",
                source_id=source_id("delta"),
                url="https://delta.example/x",
                day=20230525,
                published="2023-05-25T08:00:00Z",
                ingested_at="y",
                ingested_ms=end_of_day_ms(20230526) - 1000,
                similarity=0.91,
            )
        ]
    )
    everything = store.timeline(DOJA, 20230101, 20231231)
    assert [r.event_day for r in everything] == [20230501, 20230503, 20230520]
    assert everything[0].event_iso == "2023-05-01" and everything[0].n_sources == 2  # alpha + delta
    assert sorted(everything[0].sources) == ["alpha", "delta"]
    as_of_may10 = store.timeline(DOJA, 20230101, 20231231, as_of=20230510)
    assert [r.event_day for r in as_of_may10] == [20230501, 20230503]  # published May 20: not yet
    assert as_of_may10[0].n_sources == 1  # delta reported it later
    # Published May 20 but ingested May 21: invisible as of May 20.
    assert [r.event_day for r in store.timeline(DOJA, 20230101, 20231231, as_of=20230520)] == [20230501, 20230503]
    assert len(store.timeline(DOJA, 20230101, 20231231, as_of=20230521)) == 3
    assert store.timeline(DOJA, 20230502, 20230519) == [everything[1]]  # event-day window
    sources = store.sources_of(everything[0].id)
    assert {s.source for s in sources} == {"alpha", "delta"}


def test_a_fact_keeps_its_first_records_confidence_in_the_graph_the_mirror_and_the_timeline(world):
    """The confidence shown as of D is that of the record visible first, whichever order the records arrive in."""
    store, mirror = world.store, world.mirror
    early = chunk("Doja Cat dressed as Choupette at the Met Gala.", 20230502, "alpha", 20230502)
    later = chunk("Doja Cat dressed as Choupette, the report said again.", 20230504, "beta", 20230504)
    first = interaction(early, "Doja Cat dressed as Choupette", 20230501).model_copy(update={"confidence": 0.42})
    again = interaction(later, "Doja Cat dressed as Choupette", 20230501).model_copy(update={"confidence": 0.9})
    assert first.id == again.id
    write(store, mirror, [later], [again])  # the later record arrives first
    write(store, mirror, [early], [first])
    (row,) = store.timeline(DOJA, 20230101, 20231231)
    assert row.confidence == 0.42
    assert [i.confidence for i in store.interactions([first.id])] == [0.42]
    assert mirror.time_payloads(INTERACTIONS)[first.id]["confidence"] in (0.42, 0.9)  # what each upsert sent
    reconcile(store, mirror)
    assert mirror.time_payloads(INTERACTIONS)[first.id]["confidence"] == 0.42


def test_what_a_node_says_does_not_depend_on_the_order_its_records_arrive_in(isolated):
    """Review finding (#29): an interaction's text, an article's url and title and a source's name were set by
    whichever record arrived first. Two spellings of one fact and of one source, and two fetches of one article at
    the same instant, written in both orders (in one batch and in two) leave byte-identical graphs."""
    a = chunk("Doja Cat dressed as Choupette at the Met Gala.", 20230502, "Alpha News", 20230502, article="a_1")
    b = a.model_copy(update={"source": "alpha news", "url": "https://alpha.example/x?utm=1", "title": "Other"})
    one = interaction(a, "Doja Cat dressed as Choupette", 20230501)
    other = interaction(b, "doja cat  dressed as choupette", 20230501)
    assert one.id == other.id

    def dump(name: str, batches: list[tuple[list, list]]) -> list[str]:
        settings = isolated.graph_named(name).settings
        store = GraphStore(open_graph(settings))
        store.init()
        with store.conn:
            for chunks, facts in batches:
                write(store, None, chunks, facts)
            return graph_dump(store.conn)

    forward = dump("forward", [([a], [one]), ([b], [other])])
    backward = dump("backward", [([b], [other]), ([a], [one])])
    together = dump("together", [([b, a], [other, one])])
    assert forward == backward == together


@pytest.mark.parametrize("world", MIRROR_ENGINES, indirect=True)
def test_crash_between_graph_and_mirror_is_repaired_by_reconcile(world):
    store, mirror = world.store, world.mirror
    chunks, interactions = batch_one()
    write(store, None, chunks, interactions)  # the stage died after the graph write
    assert mirror.count(INTERACTIONS) == 0
    reports = {r.collection: r for r in reconcile(store, mirror)}
    assert reports[INTERACTIONS].added_to_mirror == 2 and reports[CHUNKS].added_to_mirror == 2
    assert (mirror.count(INTERACTIONS), mirror.count(CHUNKS)) == (
        store.counts()["interactions"],
        store.counts()["chunks"],
    )
    payload = mirror.payloads(INTERACTIONS, [interactions[0].id])[0]
    assert payload["event_day"] == 20230501 and payload["published_day"] == 20230502
    assert payload["entity_ids"] == [DOJA, CHOUPETTE] and payload["source_ids"] == [source_id("alpha")]

    # The other way round: an interaction only the mirror still has is written back into the graph.
    store.conn.run("MATCH (x:Interaction {id: $id}) DETACH DELETE x", {"id": interactions[1].id})
    mirror.upsert(
        INTERACTIONS,
        [{"graph_id": "i_orphan", "text": "nothing to hang on", "subject_id": "e_gone", "event_day": 20230101}],
    )
    reports = {r.collection: r for r in reconcile(store, mirror)}
    assert reports[INTERACTIONS].restored_to_graph == 1 and reports[INTERACTIONS].deleted_from_mirror == 1
    assert store.counts()["interactions"] == mirror.count(INTERACTIONS) == 2
    assert mirror.search(INTERACTIONS, "Doja Cat costume inspiration", limit=1)[0].payload["graph_id"] in {
        i.id for i in interactions
    }


def test_graph_cli_stats_reconcile_timeline_export(isolated, tmp_path):
    settings, env = isolated.settings, isolated.env
    store = GraphStore(open_graph(settings))
    store.init()
    chunks, interactions = batch_one()
    write(store, None, chunks, interactions)
    stats = newskg_json("graph", "stats", env=env)
    assert stats == {
        "sources": 2,
        "articles": 2,
        "chunks": 2,
        "entities": 2,
        "interactions": 2,
        "mirror": {"interactions": 0, "chunks": 0},
    }
    newskg_json("graph", "reconcile", env=env)
    assert newskg_json("graph", "stats", env=env)["mirror"] == {"interactions": 2, "chunks": 2}
    timeline = newskg_json(
        "graph", "timeline", "Doja", "--from", "2023-05-01", "--to", "2023-05-31", "--as-of", "2023-05-02", env=env
    )
    assert timeline["entity"]["name"] == "Doja Cat" and [i["text"] for i in timeline["interactions"]] == [
        "Doja Cat dressed as Choupette"
    ]
    out = tmp_path / "graph.jsonl"
    newskg("graph", "export", "--format", "jsonl", "--out", str(out), env=env)
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    # sources, articles, chunks, entities, Doja Cat's alias, interactions, and the daily mention and fact counts
    # (2 entities x 2 days each); the alias's ALIAS edge among the relationships
    assert sum(1 for x in lines if x["type"] == "node") == 2 + 2 + 2 + 2 + 1 + 2 + 4 + 4
    assert sum(1 for x in lines if x["type"] == "relationship") == 14 + 1


def test_browser_queries_run_over_bolt(tmp_path_factory):
    """Every saved query of graph/browser/queries.cypher, through the neo4j driver over Bolt (FalkorDB's Bolt
    endpoint serves its default graph "falkordb" to write-mode sessions; data is written over RESP)."""
    local = LocalStack(tmp_path_factory.mktemp("browser-bolt"))
    local.up("--only", "graph", "--bolt")
    try:
        resp_settings = local.settings.model_copy(update={"graph_database": "falkordb"})
        store = GraphStore(open_graph(resp_settings))
        chunks, interactions = batch_one()
        write(store, None, chunks, interactions)
        record = ServiceState(local.settings.services_dir).load()["graph"]
        bolt = connect_graph(f"bolt://127.0.0.1:{record.extra_ports['bolt']}", local.settings)
        params = {
            "name": "Doja Cat",
            "entity_id": DOJA,
            "from_day": 20230501,
            "to_day": 20230507,
            "as_of_day": 20230531,
            "as_of_ms": end_of_day_ms(20230531),
            "interaction_id": interactions[0].id,
            "day": 20230501,
        }
        expected_rows = {
            "find_entity": 1,
            "entity_timeline": 2,
            "who_interacted_in_week": 1,
            "sources_behind_fact": 1,
            "spike_day_subgraph": 2,
        }
        with bolt:
            for name, (query, names) in saved_queries().items():
                rows = bolt.run(query, {p: params[p] for p in names})
                assert len(rows) == expected_rows[name], (name, rows)
    finally:
        local.down()
