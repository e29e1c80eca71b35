"""Chunks that decode but cannot be extracted or written, on the real broker and FalkorDB: each lands in the DLQ
with its reason code and exception, the chunks around them are in the graph (and the mirror), and the offsets are
committed (a second run reads nothing)."""

import pytest

from newskg.core.records import Chunk, DeadLetter
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.reader import read_topic
from newskg.pipeline import ensure_topics
from newskg.wiring import kafka_options, open_graph
from tests.support.cli import newskg_json
from tests.support.kafka import publish
from tests.support.records import POISON, POISON_DAY
from tests.support.records import published_chunk as make_chunk

pytestmark = pytest.mark.integration


def test_a_poison_chunk_is_dead_lettered_and_the_stage_goes_on(isolated):
    env, settings, names = isolated.env, isolated.settings, isolated.topics
    ensure_topics(settings)
    good = [
        make_chunk("Doja Cat met Jared Leto at the Met Gala in New York on Monday.", "2023-05-02", "a1"),
        make_chunk("Anna Wintour praised Jared Leto in Paris on Tuesday.", "2023-05-03", "a3"),
    ]
    poison = Chunk(**{**make_chunk(POISON, "2023-05-02", "a2").model_dump(), "day": POISON_DAY})
    # FalkorDB refuses a NUL in a query parameter: refused before it is linked (tests/unit/test_extract_guard.py),
    # for this chunk only.
    unwritable = make_chunk("Anna Wintour thanked Doja Cat \x00 in London on Monday.", "2023-05-02", "a4")
    publish(settings, names["chunks"], [good[0], poison, unwritable, good[1]])

    stats = newskg_json("run", "extract", "--until-idle", env=env)["stages"]["extract"]
    assert stats["consumed"] == 4 and stats["dead"] == 2

    letters = {
        d.reason: d for d in (DeadLetter.from_bytes(r.value) for r in read_topic(kafka_options(settings), names["dlq"]))
    }
    assert sorted(letters) == ["extraction_error", "graph_write_error"]
    letter = letters["extraction_error"]
    assert letter.stage == "extract" and letter.topic == names["chunks"] and poison.id in letter.payload_excerpt
    assert letter.detail.startswith("ValidationError") and "event_day" in letter.detail
    assert letters["graph_write_error"].detail.startswith("Unwritable") and "NUL" in letters["graph_write_error"].detail
    assert unwritable.id in letters["graph_write_error"].payload_excerpt

    store = GraphStore(open_graph(settings))
    assert store.ids("Chunk") == {c.id for c in good}  # the chunks after the poison are in the graph
    with open_graph(settings) as conn:
        texts = {r["t"] for r in conn.read("MATCH (x:Interaction)-[:EVIDENCE]->(c:Chunk) RETURN x.text AS t")}
    assert texts  # and were extracted
    counts = newskg_json("graph", "stats", env=env)
    assert counts["mirror"] == {"interactions": counts["interactions"], "chunks": counts["chunks"]}

    again = newskg_json("run", "extract", "--until-idle", env=env)["stages"]["extract"]
    assert again["consumed"] == 0  # offsets committed past the poison: no redelivery loop
