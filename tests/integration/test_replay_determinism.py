"""Replays repeat (issue 11, item 8), on the real broker and FalkorDB: the daily mention counts live in the graph
(idempotent, shared by replicas and restarts), alias merges do not depend on the order of writes, and the same
input in the same order gives the same graph whatever the hash seed and whatever the batch boundaries."""

import json
import uuid
from pathlib import Path

import pytest

from core.ids import chunk_id, entity_id, source_id
from core.records import Chunk, Entity
from core.timeaxes import end_of_day_ms
from extract.openie.targets import GraphMentionStats
from graph.store.mentions import daily_counts
from graph.store.store import GraphStore
from ingest.kafka.reader import read_topic
from newskg.pipeline import extract_stage
from newskg.wiring import Wiring, kafka_options, open_graph
from tests.conftest import newskg, newskg_json

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "news-html"
LETO, DOJA = entity_id("Jared Leto", "PERSON"), entity_id("Doja Cat", "PERSON")


@pytest.fixture
def store(stack):
    settings = stack.settings.model_copy(update={"graph_database": f"g{uuid.uuid4().hex[:8]}"})
    graph = GraphStore(open_graph(settings))
    graph.init()
    yield graph
    graph.conn.drop()


def chunk(text: str, day: int, ingested_day: int, article: str) -> Chunk:
    return Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source="alpha",
        source_id=source_id("alpha"),
        day=day,
        published=f"{str(day)[:4]}-{str(day)[4:6]}-{str(day)[6:]}T08:00:00Z",
        ingested_at="x",
        ingested_ms=end_of_day_ms(ingested_day) - 3_600_000,
        sentence_start=0,
        sentence_end=1,
    )


def test_alias_merges_end_the_same_whatever_the_order_of_writes(stack):
    writes = [
        Entity(id=LETO, name="Jared Leto", type="PERSON", aliases=["Leto"]),
        Entity(id=LETO, name="Jared Leto", type="PERSON", aliases=["J. Leto", "Jared"]),
    ]
    results = []
    for order in (writes, writes[::-1]):
        settings = stack.settings.model_copy(update={"graph_database": f"g{uuid.uuid4().hex[:8]}"})
        graph = GraphStore(open_graph(settings))
        try:
            for entity in order:  # two replicas, each with what it had learnt
                graph.write_batch(entities=[entity])
            results.append(graph.conn.read("MATCH (e:Entity) RETURN e.aliases AS aliases"))
        finally:
            graph.conn.drop()
    assert results[0] == results[1] == [{"aliases": ["J. Leto", "Jared", "Leto"]}]


def test_daily_mention_counts_live_in_the_graph_and_survive_redelivery(store):
    entities = [Entity(id=LETO, name="Jared Leto", type="PERSON"), Entity(id=DOJA, name="Doja Cat", type="PERSON")]
    may2 = chunk("Jared Leto and Doja Cat arrived.", 20230502, 20230502, "a1")
    may2b = chunk("Jared Leto left early.", 20230502, 20230502, "a2")
    may3 = chunk("Jared Leto spoke on Wednesday.", 20230503, 20230503, "a3")
    batch = {
        "chunks": [may2, may2b, may3],
        "entities": entities,
        "mentions": [(may2.id, LETO), (may2.id, DOJA), (may2b.id, LETO), (may3.id, LETO)],
    }
    store.write_batch(**batch)
    assert daily_counts(store.conn, LETO, 20230501, 20230531) == {20230502: 2, 20230503: 1}
    store.write_batch(**batch)  # re-delivered: the same counts
    store.write_batch(chunks=[may2], entities=entities, mentions=[(may2.id, LETO)])  # and part of it again
    assert daily_counts(store.conn, LETO, 20230501, 20230531) == {20230502: 2, 20230503: 1}
    assert daily_counts(store.conn, DOJA, 20230501, 20230531) == {20230502: 1}
    # As of the end of May 2, May 3's chunk was not ingested yet.
    assert daily_counts(store.conn, LETO, 20230501, 20230531, as_of_day=20230502) == {20230502: 2}

    # A backfill re-dates may3's text to May 1: the count moves with it, nothing is counted twice.
    store.write_batch(
        chunks=[
            may3.model_copy(
                update={"day": 20230501, "published": "2023-05-01T08:00:00Z", "article_id": "a0", "article_ids": ["a0"]}
            )
        ],
        entities=entities,
        mentions=[(may3.id, LETO)],
    )
    assert daily_counts(store.conn, LETO, 20230501, 20230531) == {20230501: 1, 20230502: 2, 20230503: 0}

    # Two replicas (or a replica and its restart) read the same targets from the graph.
    first, second = GraphMentionStats(store.conn), GraphMentionStats(store.conn)
    picked = first.top_subjects(1, 20230503, 7, 20230503)
    assert picked == second.top_subjects(1, 20230503, 7, 20230503) == [LETO]
    assert first.top_pairs({LETO}, 5, 20230503, 7, 20230503) == [(LETO, DOJA)]
    assert first.top_subjects(5, 20230430, 7, 20230503) == []  # nothing published by April 30


def _pipeline_env(stack, tmp_path: Path, seed: str) -> tuple[dict, object, dict]:
    prefix = f"t{uuid.uuid4().hex[:8]}"
    names = {k: f"{prefix}.{k}" for k in ("articles", "chunks", "dlq", "dedup")}
    graph = f"g{uuid.uuid4().hex[:8]}"
    env = {
        **stack.env,
        **{f"NEWSKG_TOPIC_{k.upper()}": v for k, v in names.items()},
        "NEWSKG_GRAPH_DATABASE": graph,
        "NEWSKG_QDRANT_PATH": str(tmp_path / f"qdrant-{seed}"),
        "NEWSKG_TOPIC_PARTITIONS": "1",
        "NEWSKG_MIRROR_ENABLED": "false",
        "PYTHONHASHSEED": seed,
    }
    settings = stack.settings.model_copy(
        update={
            **{f"topic_{k}": v for k, v in names.items()},
            "graph_database": graph,
            "topic_partitions": 1,
            "mirror_enabled": False,
        }
    )
    return env, settings, names


def _export(env: dict, out: Path) -> str:
    newskg("graph", "export", "--format", "jsonl", "--out", str(out), env=env)
    return out.read_text()


def test_two_hash_seeds_and_a_replay_from_offset_zero_give_the_same_graph(stack, tmp_path):
    exports, runs = {}, {}
    for seed in ("1", "2"):
        env, settings, names = _pipeline_env(stack, tmp_path, seed)
        runs[seed] = (env, settings, names)
        newskg_json("ingest", "files", str(FIXTURES), "--backfill", "--date", "2023-05-05", env=env)
        stats = newskg_json("run", "all", "--until-idle", env=env)["stages"]
        assert stats["extract"]["consumed"] > 0 and stats["extract"]["dead"] == 0
        exports[seed] = _export(env, tmp_path / f"export-{seed}.jsonl")
    lines = exports["1"].splitlines()
    assert sum('"label": "Interaction"' in line for line in lines) > 10
    assert sum('"label": "EntityDay"' in line for line in lines) > 10
    assert exports["1"] == exports["2"]

    # The chunks topic of the first run replayed from offset 0 into an empty graph, in other batch sizes.
    env, settings, names = runs["1"]
    replay_graph = f"g{uuid.uuid4().hex[:8]}"
    replay_settings = settings.model_copy(update={"graph_database": replay_graph})
    records = read_topic(kafka_options(settings), names["chunks"])
    with Wiring(replay_settings) as wiring:
        stage = extract_stage(wiring, with_mirror=False)
        for start in range(0, len(records), 7):
            stage.handle(records[start : start + 7])
    replay = _export({**env, "NEWSKG_GRAPH_DATABASE": replay_graph}, tmp_path / "export-replay.jsonl")
    for graph in (replay_graph, runs["1"][1].graph_database, runs["2"][1].graph_database):
        with open_graph(settings.model_copy(update={"graph_database": graph})) as conn:
            conn.drop()
    assert replay == exports["1"], _first_difference(replay, exports["1"])


def _first_difference(a: str, b: str) -> str:
    for x, y in zip(a.splitlines(), b.splitlines(), strict=False):
        if x != y:
            return f"{json.loads(x)} != {json.loads(y)}"
    return f"lengths {len(a.splitlines())} != {len(b.splitlines())}"
