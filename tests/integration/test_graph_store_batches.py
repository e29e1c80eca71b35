"""The write path's statements fold work per batch (a chunk and its IN edges in one statement, a chunk's mentions
in one row, an interaction and its OBJECT edge in one statement, an EntityDay count set in its MERGE). Folding
must not change what the graph holds: the same records leave the same graph written batch by batch, all in one
batch, or delivered twice, on the real FalkorDB."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.batch_scenario import SHARED_TEXT, scenario_batches
from tests.support.graph_dump import graph_dump
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration


def written(isolated: Isolated, name: str, batches: list[dict[str, Any]]) -> list[str]:
    store = GraphStore(open_graph(isolated.graph_named(name).settings))
    try:
        store.init()
        for batch in batches:
            store.write_batch(**batch)
        return graph_dump(store.conn)
    finally:
        store.conn.close()


def one_batch(batches: list[dict[str, Any]]) -> dict[str, Any]:
    """Every batch's records in one write_batch call (lists concatenated, marked texts united)."""
    merged: dict[str, Any] = {}
    for batch in batches:
        for key, value in batch.items():
            merged[key] = merged.get(key, {}) | value if key == "marked" else [*merged.get(key, []), *value]
    return merged


def test_batch_by_batch_one_batch_and_redelivered_leave_the_same_graph(isolated: Isolated):
    batches = scenario_batches()
    by_batch = written(isolated, "by_batch", batches)
    assert written(isolated, "one_batch", [one_batch(batches)]) == by_batch
    assert written(isolated, "twice", batches + batches) == by_batch


def test_a_chunk_keeps_an_in_edge_per_article_and_an_interaction_without_object_gets_none(isolated: Isolated):
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    for batch in scenario_batches():
        store.write_batch(**batch)
    edges = store.conn.read(
        "MATCH (c:Chunk {text: $text})-[r:IN]->(a:Article) RETURN a.id AS article, r.day AS day ORDER BY article",
        {"text": SHARED_TEXT},
    )
    assert [(e["article"], e["day"]) for e in edges] == [
        ("a_alpha_live", 20230510),
        ("a_beta_repeat", 20230511),
        ("a_gamma_backfill", 20230509),
    ]
    chunk = store.conn.read(
        "MATCH (c:Chunk {text: $text}) RETURN c.day AS day, c.article_id AS a", {"text": SHARED_TEXT}
    )
    # visible first: the live record (May 10), not its repeat (May 11) nor the backfill (ingested May 15)
    assert chunk == [{"day": 20230510, "a": "a_alpha_live"}]
    lone = store.conn.read(
        "MATCH (x:Interaction {text: 'Doja Cat toured the Louvre'}) "
        "OPTIONAL MATCH (x)-[:OBJECT]->(o) RETURN x.object_id AS object, count(o) AS objects"
    )
    assert lone == [{"object": None, "objects": 0}]
    evidence = store.conn.read(
        "MATCH (x:Interaction {text: 'Doja Cat toured the Louvre'})-[:EVIDENCE]->(c:Chunk) RETURN count(c) AS n"
    )
    assert evidence[0]["n"] >= 1, "the statement's OBJECT part must not cut the EVIDENCE edges after it"
    mentions = store.conn.read(
        "MATCH (c:Chunk {text: $text})-[m:MENTIONS]->(e:Entity) RETURN count(m) AS n", {"text": SHARED_TEXT}
    )
    assert mentions == [{"n": 2}], "duplicate mentions make one edge per chunk and entity"
    store.conn.close()


PROBES = "MATCH (p:Probe) RETURN p.id AS id ORDER BY id"


@pytest.mark.parametrize(
    "failing",
    [
        "UNWIND ['dup', 'dup'] AS id CREATE (:Entity {id: id})",  # a run-time error: the unique constraint
        "MATCH (p:Probe) RETURN p.id AS id, $missing AS m",  # refused before it runs: a parameter is missing
    ],
)
def test_falkordb_run_many_runs_in_order_and_nothing_after_a_failure(isolated: Isolated, failing: str):
    """run_many pipelines (the next statement is encoded while the server runs the one before), yet a statement
    still runs only once every one before it succeeded: the store's journals, written last, mean the rest was
    written (graph/store/journals.py)."""
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    create = "CREATE (:Probe {id: $id})"

    def statements():  # a generator: read once, lazily
        yield create, {"id": "first"}
        yield "MATCH (p:Probe {id: $id}) SET p.seen = true", {"id": "first"}
        yield failing, {}
        yield create, {"id": "after"}

    with pytest.raises(redis.ResponseError):
        store.conn.run_many(statements())
    assert store.conn.read("MATCH (p:Probe) RETURN p.id AS id, p.seen AS seen") == [{"id": "first", "seen": True}]
    store.conn.run_many([(create, {"id": "again"})])  # the connection is still usable
    assert [r["id"] for r in store.conn.read(PROBES)] == ["again", "first"]
    store.conn.close()
