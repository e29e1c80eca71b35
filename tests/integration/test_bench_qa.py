"""The QA bench loads its interactions by one CREATE per row (bench/qa_graph.py BULK_INTERACTIONS) instead of the
pipeline's MERGE statements: on the real FalkorDB, the nodes, properties and edges it leaves are exactly those the
store's write path leaves for the same records, so the bench measures reads of the graph the pipeline makes."""

from __future__ import annotations

import pytest

from bench import qa, qa_graph
from newskg.graph.store import writes
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.isolation import Isolation

pytestmark = pytest.mark.integration

SHAPE = """
MATCH (s:Entity)-[a]->(x:Interaction)-[b:OBJECT]->(o:Entity)
OPTIONAL MATCH (x)-[:EVIDENCE]->(c:Chunk)
WITH s, a, x, b, o, collect(c.id) AS evidence
OPTIONAL MATCH (x)-[r:ABOUT]->(m:Entity)
WITH s, a, x, b, o, evidence, m.id AS about, r.key AS key ORDER BY about
RETURN s.id AS subject, type(a) AS subject_edge, properties(x) AS fact, type(b) AS object_edge, o.id AS object,
       evidence, collect([about, key]) AS about
ORDER BY fact.id
"""


# The daily mention and fact counts (EntityDay, FactDay) and where the write path marks what it counted.
COUNTS = """
MATCH (d) WHERE d:EntityDay OR d:FactDay
RETURN labels(d) AS labels, properties(d) AS p
ORDER BY p.id
"""
COUNTED = """
MATCH (c:Chunk)-[r:MENTIONS]->(e:Entity)
RETURN c.id AS chunk, e.id AS entity, properties(r) AS p
ORDER BY chunk, entity
"""


def test_the_bench_loads_interactions_as_the_pipeline_writes_them(stack, tmp_path):
    batch = next(qa_graph.batches(25))
    facts = batch.facts
    mentions = [(c, e) for c, ids in batch.mentions.items() for e in ids]
    with Isolation(stack, tmp_path) as isolation:
        isolated = isolation.new()
        piped = GraphStore(open_graph(isolated.settings))
        bulk = GraphStore(
            open_graph(isolated.settings.model_copy(update={"graph_database": f"{isolated.prefix}.bulk"}))
        )
        try:
            for store in (piped, bulk):
                store.init()
                store.write_batch(entities=list(qa_graph.entities(25)))
                store.write_batch(chunks=batch.chunks)
            piped.write_batch(mentions=mentions, interactions=facts)
            mention_rows = [{"chunk_id": c, "entity_ids": ids} for c, ids in batch.mentions.items()]
            bulk.conn.run(writes.MENTIONS, {"rows": mention_rows})
            qa_graph.write_bulk(bulk.conn, facts)
            assert qa_graph.build_counts(bulk.conn) > 0
            # as plain dicts: the order a statement sets properties in is not what the graph states
            written, loaded = ([{**r, "fact": dict(r["fact"])} for r in c.read(SHAPE)] for c in (piped.conn, bulk.conn))
            assert len(written) == len(facts) == 25
            assert all(len(r["evidence"]) == 1 for r in written)
            # each fact is ABOUT the two entities of its chunk it does not name
            assert all(len(r["about"]) == qa_graph.ENTITIES_PER_CHUNK - 2 for r in written)
            assert loaded == written
            assert {"event_day", "published_day", "ingested_ms", "first_key"} <= set(written[0]["fact"])
            assert {"subject_cell", "object_cell", "counted", "sources_bound", "weight_bound"} <= set(
                written[0]["fact"]
            )
            # the daily counts the resolver's profiles read, and the marks of what they counted
            for query in (COUNTS, COUNTED):
                piped_rows, bulk_rows = (
                    [{**r, "p": dict(r["p"])} for r in c.read(query)] for c in (piped.conn, bulk.conn)
                )
                assert piped_rows and bulk_rows == piped_rows
            labels = [r["labels"] for r in piped.conn.read(COUNTS)]
            assert ["FactDay"] in labels and ["EntityDay"] in labels
        finally:
            for store in (piped, bulk):
                store.conn.drop()
                store.conn.close()


def test_the_bench_builds_the_mirror_in_a_process_of_its_own_and_the_api_opens_it(tmp_path):
    """The Edge shard admits one process at a time: the bench builds it in a short-lived process, which must
    release it, so that the API's process opens the built shard (as `newskg serve` does) with every point."""
    from newskg.core.settings import Settings
    from newskg.graph.mirror.base import CHUNKS, INTERACTIONS
    from newskg.wiring import open_mirror

    settings = Settings(data_dir=tmp_path, mirror_engine="edge", _env_file=None)  # pyright: ignore[reportCallIssue]
    report = tmp_path / "mirror-load.txt"
    qa.in_process(qa.build_mirror, settings, 300, report)
    assert float(report.read_text()) > 0
    mirror = open_mirror(settings)
    try:
        assert (mirror.count(INTERACTIONS), mirror.count(CHUNKS)) == (300, 60)
    finally:
        mirror.close()
