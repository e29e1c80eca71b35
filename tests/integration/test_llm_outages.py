"""Failure injection on the LLM endpoint under a running extract stage (a process, variant M1): a proxy in front of
the real llama.cpp server (tests/support/sites.py `FaultProxy`) answers 429, then 503, to the first requests, then
forwards. The batch is held: nothing is dead-lettered, nothing committed and nothing written until the endpoint
answers; then it lands, and the graph and the mirror agree. (FalkorDB refusing writes is
test_classifier_outages.py; a Qdrant server answering 503 cannot be run here: the only Qdrant on these machines is
qdrant-client's local mode, in process, and the classifier's handling of its `UnexpectedResponse` is covered by
unit/test_failure_classifier.py and unit/test_outage_handling.py.)

Review finding: "Misclassified failures … Whether a server is out of reach is decided in three places … Make it one
classifier … covering every server the project talks to (broker, FalkorDB, Neo4j, Qdrant local and server, the LLM
endpoint)". Review finding: "`extract stats` counters and LLM usage are incremented before the commit and again on
each redelivery: count what was committed"."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import redis.exceptions

from newskg.core.llm.cache import LLMCache
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.reader import read_topic
from newskg.pipeline import ensure_topics
from newskg.wiring import graph_uri, kafka_bootstrap, kafka_options, llm_base_url, open_graph
from tests.support.cli import newskg_json
from tests.support.kafka import publish
from tests.support.processes import StageProcess
from tests.support.records import published_chunk
from tests.support.sites import FaultProxy

pytestmark = [pytest.mark.integration, pytest.mark.llm]

TEXTS = [
    "Doja Cat met Jared Leto at the Met Gala in New York on Monday.",
    "Doja Cat thanked Anna Wintour for the invitation in a statement on Tuesday.",
]
# The client tries each call twice (NEWSKG_LLM_MAX_RETRIES=1), so 10 faults are five held tries of the batch:
# 429s first (RateLimitError), then 503s (InternalServerError), with the runner's backoff in between (~15 s).
FAULTS = [429] * 5 + [503] * 5


def written(store: GraphStore) -> set[str]:
    try:
        return store.ids("Chunk")
    except redis.exceptions.ResponseError:  # the stage has not created the graph yet
        return set()


@pytest.fixture
def proxy(llm_stack) -> Iterator[FaultProxy]:
    """The fault proxy in front of the session's llama.cpp server."""
    upstream = llm_base_url(llm_stack.settings)
    assert upstream, "the llama.cpp server is not running"
    faulty = FaultProxy(upstream, FAULTS)
    yield faulty
    faulty.close()


@pytest.mark.timeout(600)
def test_review_finding_llm_429_and_503_hold_the_m1_batch_until_the_endpoint_answers(stack, proxy, isolated, tmp_path):
    world = isolated.configured(
        data_dir=tmp_path / "data",  # an empty LLM cache and ledger: every prompt goes to the endpoint
        kafka_bootstrap=kafka_bootstrap(stack.settings),
        graph_uri=graph_uri(stack.settings),
        llm_base_url=proxy.base,
        llm_max_retries=1,
        llm_max_tokens=96,
        extract_subjects=["Doja Cat"],
    )
    env, settings = world.env, world.settings
    ensure_topics(settings)
    chunks = [published_chunk(text, f"2023-05-0{n + 2}", f"a{n}") for n, text in enumerate(TEXTS)]
    group, topic = settings.consumer_group("extract"), settings.topic_chunks
    store = GraphStore(open_graph(settings))
    admin = TopicAdmin(kafka_options(settings))
    stage = StageProcess(["run", "extract", "--variant", "m1", "--json"], env)
    try:
        publish(settings, topic, chunks)
        stage.wait_until(
            lambda: stage.saw("outage (InternalServerError"), timeout_s=240, what="a 503 holding the batch"
        )
        # Held: the endpoint has answered nothing yet, and nothing was written, dead-lettered or committed.
        assert stage.saw("outage (RateLimitError") and proxy.log.forwarded == []
        assert written(store) == set()
        assert list(read_topic(kafka_options(settings), settings.topic_dlq)) == []
        assert admin.group_lag(group, topic) in (None, len(chunks))
        assert proxy.log.forwarded == [] and proxy.faults_left > 0  # all of the above seen while it was held
        stage.wait_until(lambda: written(store) == {c.id for c in chunks}, timeout_s=300, what="the held batch written")
        stage.wait_until(lambda: admin.group_lag(group, topic) == 0, timeout_s=60, what="the batch committed")
        assert stage.proc.poll() is None  # the stage never exited
        assert stage.stop() == 0
    finally:
        if stage.proc.poll() is None:
            stage.kill()
        admin.close()
    assert proxy.log.faults == FAULTS and stage.saw("recovered after"), stage.output()[-3000:]
    assert list(read_topic(kafka_options(settings), settings.topic_dlq)) == []  # nothing dead-lettered
    counts = newskg_json("graph", "stats", env=env)
    assert counts["chunks"] == len(chunks)
    assert counts["mirror"] == {"interactions": counts["interactions"], "chunks": counts["chunks"]}

    # `extract stats` counts what was committed: a call is an answer the endpoint gave (the faulted requests
    # cost nothing), one per prompt asked, (chunk, subject) for each chunk the graph says mentions Doja Cat (a
    # second call only for an answer that did not parse); no answer came from the cache, since no held try got one.
    with open_graph(settings) as conn:
        mentions = "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {name: 'Doja Cat'}) RETURN count(DISTINCT c) AS n"
        asked = conn.read(mentions)[0]["n"]
    stats = newskg_json("extract", "stats", env=env)
    (m1,) = [row for row in stats["by_prompt"] if row["prompt"] == "m1_subject"]
    assert asked == len(chunks) and m1["calls"] == proxy.log.forwarded.count(200) >= asked
    assert m1["cached"] == 0 and m1["failures"] <= asked
    assert stats["totals"]["calls"] == m1["calls"]
    # Committed once: a new run reads nothing and counts nothing.
    again = newskg_json("run", "extract", "--variant", "m1", "--until-idle", env=env)["stages"]["extract"]
    assert again["consumed"] == 0 and newskg_json("extract", "stats", env=env) == stats
    ledger = LLMCache(settings.data_dir / "llm" / "cache.sqlite").usage()
    assert [row["calls"] for row in ledger if row["prompt"] == "m1_subject"] == [m1["calls"]]
