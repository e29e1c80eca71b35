"""Replays repeat (issue 11, item 8), on the real broker and FalkorDB: the daily mention counts live in the graph
(idempotent, shared by replicas and restarts), alias merges do not depend on the order of writes, and the same
input in the same order gives the same graph whatever the hash seed and whatever the batch boundaries; the chaos
stream in three partition interleavings and batch sizes gives one export, byte for byte (issue 29)."""

import json
from pathlib import Path

import pytest

from newskg.core.ids import article_id, entity_id
from newskg.core.records import Chunk, ChunkSighting, Entity, decode_any
from newskg.extract.openie.targets import GraphMentionStats
from newskg.graph.store.mentions import daily_counts
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.kafka.stage import run_stages
from newskg.pipeline import extract_stage, process_runner
from newskg.wiring import Wiring, kafka_options, open_graph
from tests.support.articles import NEWS_HTML as FIXTURES
from tests.support.articles import STORIES, STORY, ingest_stories
from tests.support.cli import newskg, newskg_json
from tests.support.isolation import Isolated
from tests.support.records import dated_chunk

pytestmark = pytest.mark.integration

LETO, DOJA = entity_id("Jared Leto", "PERSON"), entity_id("Doja Cat", "PERSON")


@pytest.fixture
def store(isolated):
    graph = GraphStore(open_graph(isolated.settings))
    graph.init()
    yield graph
    graph.conn.close()


def chunk(text: str, day: int, ingested_day: int, article: str):
    return dated_chunk(text, day, ingested_day=ingested_day, article=article)


def test_alias_merges_end_the_same_whatever_the_order_of_writes(isolated):
    writes = [
        Entity(id=LETO, name="Jared Leto", type="PERSON", aliases=["Leto"]),
        Entity(id=LETO, name="Jared Leto", type="PERSON", aliases=["J. Leto", "Jared"]),
    ]
    results = []
    for n, order in enumerate((writes, writes[::-1])):
        with open_graph(isolated.graph_named(f"order{n}").settings) as conn:
            graph = GraphStore(conn)
            for entity in order:  # two replicas, each with what it had learnt
                graph.write_batch(entities=[entity])
            rows = graph.conn.read("MATCH (:Entity)-[:ALIAS]->(a:Alias) RETURN a.name AS alias")  # (#29: dated nodes)
            results.append(sorted(r["alias"] for r in rows))
    assert results[0] == results[1] == ["J. Leto", "Jared", "Leto"]


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


def _pipeline(isolated: Isolated, seed: str) -> tuple[dict[str, str], Isolated]:
    """A world of its own, one partition, no mirror; the CLI runs under PYTHONHASHSEED=seed."""
    run = isolated.fresh(topic_partitions=1, mirror_enabled=False)
    return {**run.env, "PYTHONHASHSEED": seed}, run


def _export(env: dict, out: Path) -> str:
    newskg("graph", "export", "--format", "jsonl", "--out", str(out), env=env)
    return out.read_text()


def test_two_hash_seeds_and_a_replay_from_offset_zero_give_the_same_graph(isolated, tmp_path):
    exports, runs = {}, {}
    for seed in ("1", "2"):
        env, run = _pipeline(isolated, seed)
        runs[seed] = (env, run)
        newskg_json("ingest", "files", str(FIXTURES), "--backfill", "--date", "2023-05-05", env=env)
        stats = newskg_json("run", "all", "--until-idle", env=env)["stages"]
        assert stats["extract"]["consumed"] > 0 and stats["extract"]["dead"] == 0
        exports[seed] = _export(env, tmp_path / f"export-{seed}.jsonl")
    lines = exports["1"].splitlines()
    assert sum('"label": "Interaction"' in line for line in lines) > 10
    assert sum('"label": "EntityDay"' in line for line in lines) > 10
    assert exports["1"] == exports["2"]

    # The chunks topic of the first run replayed from offset 0 into an empty graph, in other batch sizes.
    _, run = runs["1"]
    replay = run.graph_named("replay")
    records = read_topic(kafka_options(run.settings), run.topics["chunks"])
    with Wiring(replay.settings) as wiring:
        stage = extract_stage(wiring, with_mirror=False)
        for start in range(0, len(records), 7):
            stage.handle(records[start : start + 7])
    replayed = _export({**replay.env, "PYTHONHASHSEED": "1"}, tmp_path / "export-replay.jsonl")
    assert replayed == exports["1"], _first_difference(replayed, exports["1"])


def _first_difference(a: str, b: str) -> str:
    for x, y in zip(a.splitlines(), b.splitlines(), strict=False):
        if x != y:
            return f"{json.loads(x)} != {json.loads(y)}"
    return f"lengths {len(a.splitlines())} != {len(b.splitlines())}"


def _content(export: str) -> tuple[list[str], set[str], set[str]]:
    """An export as (every line but the article nodes and their IN and FROM edges, the article ids, the IN edges):
    what ingesting the same pages again may change is the article records and their sightings, nothing else."""
    kept, articles, sightings = [], set(), set()
    for line in export.splitlines():
        item = json.loads(line)
        if item.get("label") == "Article":
            articles.add(item["id"])
        elif item.get("rel") == "IN":
            sightings.add(line)
        elif item.get("rel") != "FROM":
            kept.append(line)
    return sorted(kept), articles, sightings


@pytest.mark.parametrize("window_days", [30, 1000])
def test_review_finding_reingesting_identical_pages_leaves_the_graph_unchanged(isolated, tmp_path, window_days):
    """review finding: "Re-ingesting identical pages changes the graph": the same files ingested again gave new
    interactions, entities and aliases, because the extract stage extracted a chunk it had written whole again
    (the new record has a later ingestion instant, so it linked against a larger index). Now a chunk written whole
    gains the new record's sighting and nothing else. The fixture pages span 2018-04 to 2019-11: with the default
    30-day dedup window most of them are outside it (their chunks are re-emitted to the extract stage), the newest
    inside; with 1000 days all are inside. Each is ingested again live and again as a backfill (other ingestion
    instants, earlier than the first): `graph export` is unchanged but for the article records and their edges."""
    run = isolated.fresh(topic_partitions=1, mirror_enabled=False, dedup_window_days=window_days)
    env = run.env
    exports = []
    for n, flags in enumerate(((), (), ("--backfill",))):
        newskg_json("ingest", "files", str(FIXTURES), "--date", "2023-05-05", *flags, env=env)
        stats = newskg_json("run", "all", "--until-idle", env=env)["stages"]
        assert stats["extract"]["dead"] == 0 and stats["process"]["dead"] == 0
        exports.append(_export(env, tmp_path / f"export-{window_days}-{n}.jsonl"))
        if n == 1 and window_days == 30:
            assert stats["extract"]["consumed"] > 0  # re-emitted chunks reached the extract stage
    first, articles, sightings = _content(exports[0])
    assert sum('"label": "Interaction"' in line for line in first) > 10
    for again in exports[1:]:
        content, again_articles, again_sightings = _content(again)
        assert again_articles == articles and again_sightings >= sightings
        assert content == first, _first_difference("\n".join(content), "\n".join(first))


# --- The chaos stream in three partition interleavings and batch sizes (issue 29)

CHAOS = ("--timelines", "1", "--events", "3", "--seed", "5")  # the stream test_scale_out.py scales out


def _interleavings(records: list) -> dict[str, tuple[list, int]]:
    """Three orders a consumer of the 6-partition topic can be handed, each with its own stage batch size: the
    extract consumer's ingestion-order gate (ingest/kafka/ingestion_order.py) over three fetch timings: batches of
    5 from the partitions in turn from the first, batches of 16 in turn from the last, and one record at a time."""
    from bench.determinism import gated

    by_partition = [[r for r in records if r.partition == p] for p in sorted({r.partition for r in records})]
    return {
        "first": (gated(by_partition, 5), 7),
        "last": (gated(list(reversed(by_partition)), 16), 16),
        "single": (gated(by_partition, 1), 3),
    }


def test_the_chaos_stream_in_three_interleavings_and_batch_sizes_gives_one_export(isolated, tmp_path):
    """Issue 29: the chaos stream's make-up (the bundled real pages backfilled, whose publication instants put
    their partitions out of ingestion order, and a synthetic timeline) through process into a 6-partition chunks
    topic, then handed to the extract stage by its ingestion-order gate over three fetch timings and batch sizes,
    into three graphs, gives one `graph export`, byte for byte: names, types, aliases, texts, links, facts and
    their confidence (whose model no longer reads whether the linker had seen the subject's name before: that
    depended on which partition came first, and made 37 of ~1,660 records differ; and which, between two chunks
    reading one sentence at one instant, keeps the higher: graph/store/writer.interaction_first_key)."""
    run = isolated.fresh(topic_partitions=6, mirror_enabled=False)
    newskg_json("ingest", "files", str(FIXTURES), "--backfill", "--date", "2023-05-05", env=run.env)
    newskg_json("ingest", "synthetic", *CHAOS, "--out", str(tmp_path / "synthetic"), env=run.env)
    newskg_json("run", "process", "--until-idle", env=run.env)
    records = read_topic(kafka_options(run.settings), run.topics["chunks"])
    exports = {}
    for name, (ordered, batch) in _interleavings(records).items():
        assert sorted((r.partition, r.offset) for r in ordered) == sorted((r.partition, r.offset) for r in records)
        replay = run.graph_named(name)
        with Wiring(replay.settings) as wiring:
            stage = extract_stage(wiring, with_mirror=False)
            for start in range(0, len(ordered), batch):
                stage.handle(ordered[start : start + batch])
        exports[name] = _export(replay.env, tmp_path / f"export-{name}.jsonl")
    assert sum('"label": "Interaction"' in line for line in exports["first"].splitlines()) > 100
    for name in ("last", "single"):
        assert exports[name] == exports["first"], (name, _differences(exports[name], exports["first"]))


def _differences(a: str, b: str) -> list[str]:
    """The lines only one export has (a's marked '-', b's '+'), the first ten."""
    only_a, only_b = set(a.splitlines()) - set(b.splitlines()), set(b.splitlines()) - set(a.splitlines())
    return sorted([f"- {line}" for line in only_a] + [f"+ {line}" for line in only_b])[:10]


# --- The process stage's order: which near-duplicate is kept and what the dedup window holds


def _source_on(partition: int, partitions: int, day: str, taken: set[str]) -> str:
    """A source name whose story (https://SOURCE.example/DAY, tests/support/articles.ingest_stories) the producer's
    partitioner (kafka-python's, by article id) puts on `partition`."""
    from kafka.partitioner.default import murmur2

    for n in range(1000):
        source = f"src{n}"
        key = article_id(f"https://{source}.example/{day}", None).encode()
        if source not in taken and (murmur2(key) & 0x7FFFFFFF) % partitions == partition:
            return source
    raise AssertionError("no source name lands on that partition")


def _process(world: Isolated) -> tuple[set[str], set[tuple[str, str]]]:
    """`run process --until-idle` in this process; the chunks kept and the sightings (article, kept chunk)."""
    with Wiring(world.settings) as wiring:
        run_stages([process_runner(wiring)], until_idle=True)
    kept, sightings = set(), set()
    for record in read_topic(kafka_options(world.settings), world.topics["chunks"]):
        message = decode_any(record.value or b"")
        if isinstance(message, Chunk):
            kept.add(message.id)
        elif isinstance(message, ChunkSighting):
            sightings.add((message.article_id, message.chunk_id))
    return kept, sightings


def test_the_process_stage_keeps_the_same_chunks_whatever_order_the_articles_cross_the_partitions_in(
    isolated, tmp_path
):
    """Two `make demo` runs kept 1009 and 1008 chunks: the process stage decided articles in the order its polls
    returned them, so fetch timing chose which copy of a near-duplicate pair was kept, and which articles fell out of
    the dedup window because another partition had been read ahead (its clock is the newest day met). Here, on 3
    partitions: story A (May 1) and an unrelated story D (September 1) on one partition, B (May 2, A with one word
    changed) on another, sent A, D, B. Handed on as polled (whole partitions, as a small topic is), B met A either
    before A (B kept, A its sighting) or after D had moved the window past May (both kept, no sighting). Now the
    stage gets them in ingestion order (ingest/process/order.py): the chunks and sightings of one partition fed in
    publication order."""
    a_text = STORY
    b_text = STORY.replace("striking red outfit", "striking crimson outfit")
    d_text = STORIES[2][2] + " " + STORIES[1][2]
    days = {"a": "2023-05-01", "b": "2023-05-02", "d": "2023-09-01"}
    taken: set[str] = set()
    sources = {}
    for name, partition in (("a", 0), ("d", 0), ("b", 1)):
        sources[name] = _source_on(partition, 3, days[name], taken)
        taken.add(sources[name])
    story = {"a": a_text, "b": b_text, "d": d_text}

    def stories(order: str) -> list[tuple[str, str, str]]:
        return [(days[n], sources[n], story[n]) for n in order]

    serial = isolated.fresh(topic_partitions=1, mirror_enabled=False)
    ingest_stories(serial.env, tmp_path, stories("abd"), name="serial.jsonl")
    spread = isolated.fresh(topic_partitions=3, mirror_enabled=False)
    ingest_stories(spread.env, tmp_path, stories("adb"), name="spread.jsonl")
    placed = {r.partition for r in read_topic(kafka_options(spread.settings), spread.topics["articles"])}
    assert placed == {0, 1}  # the partitioner put them where the scenario needs them
    kept, sightings = _process(spread)
    expected_kept, expected_sightings = _process(serial)
    assert expected_sightings  # B is a near-duplicate of A: the scenario exercises the dedup
    assert (kept, sightings) == (expected_kept, expected_sightings)
