"""The per-test isolation on the real servers: every name is the test's own (topics, the stages' consumer groups,
graph, Qdrant folder), and all of it is gone after the test, also when the test failed and left a static member
in a group (which noida-db never expires)."""

import pytest
from kafka import KafkaAdminClient

from newskg.graph.store.store import GraphStore
from newskg.pipeline import ensure_topics, group_consumer
from newskg.wiring import Wiring, kafka_options, open_graph, open_qdrant
from tests.support.isolation import Isolation
from tests.support.kafka import publish
from tests.support.records import dated_chunk

pytestmark = pytest.mark.integration


def _leftovers(stack, prefix: str) -> dict[str, list[str]]:
    admin = KafkaAdminClient(**kafka_options(stack.settings))
    try:
        topics = [t for t in admin.list_topics() if t.startswith(prefix)]
        groups = [g["group_id"] if isinstance(g, dict) else g[0] for g in admin.list_groups()]
    finally:
        admin.close()
    with open_graph(stack.settings) as conn:
        graphs = [g.decode() if isinstance(g, bytes) else g for g in conn.execute_command("GRAPH.LIST")]
    return {
        "topics": topics,
        "groups": [g for g in groups if g.startswith(prefix)],
        "graphs": [g for g in graphs if g.startswith(prefix)],
    }


def test_names_are_the_tests_own_and_removed_even_when_the_test_fails(stack, tmp_path):
    class Boom(Exception):
        pass

    with pytest.raises(Boom), Isolation(stack, tmp_path) as isolation:
        isolated = isolation.new()
        settings = isolated.settings
        assert settings.consumer_group("process") == f"{isolated.prefix}-process"
        assert isolated.env["NEWSKG_GROUP_PREFIX"] == isolated.prefix
        assert all(name.startswith(isolated.prefix) for name in [*isolated.topics.values(), settings.graph_database])
        ensure_topics(settings)
        publish(settings, settings.topic_articles, [dated_chunk("A message to consume.", 20230501)])
        with Wiring(settings) as wiring:
            consumer = group_consumer(wiring, settings.consumer_group("process"), "process", [settings.topic_articles])
            while not consumer.poll(timeout_ms=1000):
                pass
        # The bundle closed the consumer: a static member, it stays in the group after a clean close.
        GraphStore(open_graph(settings)).init()
        open_qdrant(settings).close()
        other = isolated.graph_named("other")
        with open_graph(other.settings) as conn:
            conn.run("CREATE (:Marker)")
        found = _leftovers(stack, isolated.prefix)
        assert sorted(found["topics"]) == sorted(isolated.topics.values())
        assert found["groups"] == [settings.consumer_group("process")]
        assert sorted(found["graphs"]) == sorted([settings.graph_database, other.settings.graph_database])
        assert settings.qdrant_local_path.exists()
        raise Boom  # the test fails here
    assert _leftovers(stack, isolated.prefix) == {"topics": [], "groups": [], "graphs": []}
    assert not settings.qdrant_local_path.exists()
