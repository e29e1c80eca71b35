"""Failure injection on the real FalkorDB under a running extract stage (a process): the server refusing writes with
READONLY (made a replica of nothing, then primary again) is an outage. The batch is held: nothing is
dead-lettered, nothing committed, the chunk lands once writes are accepted, and graph and mirror agree.

Review finding: "FalkorDB `READONLY`/`OOM` are not outages (`extract/failures.py:21`), so a whole batch is written
to the graph, then dead-lettered as `graph_write_error` and committed" (the classifier: core/failures.py)."""

import time

import pytest
import redis.exceptions

from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.reader import read_topic
from newskg.pipeline import ensure_topics
from newskg.wiring import kafka_options, open_graph
from tests.support.cli import newskg_json
from tests.support.kafka import publish
from tests.support.processes import StageProcess
from tests.support.records import published_chunk

pytestmark = pytest.mark.integration

FIRST = "Doja Cat met Jared Leto at the Met Gala in New York on Monday."
SECOND = "Anna Wintour praised Jared Leto in Paris on Tuesday."


def written(store: GraphStore) -> set[str]:
    """The chunk ids in the graph (none while the stage has not created it yet)."""
    try:
        return store.ids("Chunk")
    except redis.exceptions.ResponseError:
        return set()


def test_review_finding_falkordb_readonly_holds_the_batch_until_writes_are_accepted_again(isolated):
    env, settings, names = isolated.env, isolated.settings, isolated.topics
    ensure_topics(settings)
    first, second = published_chunk(FIRST, "2023-05-02", "a1"), published_chunk(SECOND, "2023-05-03", "a2")
    store = GraphStore(open_graph(settings))
    admin = open_graph(settings)  # the same server: REPLICAOF applies to all of it
    stage = StageProcess(["run", "extract", "--json"], env)
    try:
        publish(settings, names["chunks"], [first])
        stage.wait_until(lambda: first.id in written(store), what="the first chunk in the graph")
        admin.execute_command("REPLICAOF", "127.0.0.1", "1")  # a replica of a primary that is not there: READONLY
        try:
            publish(settings, names["chunks"], [second])
            stage.wait_until(lambda: stage.saw("outage (ReadOnlyError"), timeout_s=120, what="the outage held")
            time.sleep(2)  # a few retries with backoff
            assert second.id not in written(store)
            assert list(read_topic(kafka_options(settings), names["dlq"])) == []
        finally:
            admin.execute_command("REPLICAOF", "NO", "ONE")
        stage.wait_until(lambda: second.id in written(store), timeout_s=120, what="the held chunk written")
        assert stage.stop() == 0
    finally:
        if stage.proc.poll() is None:
            stage.kill()
        admin.close()
    assert stage.saw("recovered after"), stage.output()[-2000:]
    assert list(read_topic(kafka_options(settings), names["dlq"])) == []  # nothing dead-lettered
    counts = newskg_json("graph", "stats", env=env)
    assert counts["chunks"] == 2 and counts["mirror"] == {
        "interactions": counts["interactions"],
        "chunks": counts["chunks"],
    }
    again = newskg_json("run", "extract", "--until-idle", env=env)["stages"]["extract"]
    assert again["consumed"] == 0  # committed once it landed, not before
