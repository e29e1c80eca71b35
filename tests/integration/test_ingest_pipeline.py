"""Ingestion end to end on the real broker: files → news.articles → process stage → news.chunks / news.dlq,
driven through the real CLI in separate processes (so dedup state must survive between runs)."""

import json

import pytest

from newskg.core.records import Chunk, ChunkSighting, DeadLetter, RawArticle, decode_any
from newskg.core.settings import Settings
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.process.article import raw_article_id
from newskg.wiring import Wiring, kafka_options
from tests.support.articles import NEWS_HTML as FIXTURES
from tests.support.articles import STORY
from tests.support.cli import newskg, newskg_json
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration

# The fixture pages were published from 2018-04 to 2019-11; "re-ingest adds nothing" holds inside the dedup
# window (default 30 days back from the newest publication day seen), so the window here spans them all.
WIDE_WINDOW = {"dedup_window_days": 1000}


@pytest.fixture
def topics(isolated: Isolated) -> tuple[dict[str, str], Settings, dict[str, str]]:
    """This test's own topics and process group, the dedup window wide enough for the fixture pages."""
    wide = isolated.configured(**WIDE_WINDOW)
    return wide.env, wide.settings, wide.topics


def chunks_topic(settings, names):
    records = [decode_any(r.value) for r in read_topic(kafka_options(settings), names["chunks"])]
    return ([r for r in records if isinstance(r, Chunk)], [r for r in records if isinstance(r, ChunkSighting)])


def run_process(env) -> dict:
    return newskg_json("run", "process", "--until-idle", env=env)["stages"]["process"]


def test_real_pages_become_chunks_and_reingesting_adds_none(topics):
    env, settings, names = topics
    sent = newskg_json("ingest", "files", str(FIXTURES), "--source", "benchmark", env=env)
    assert sent["sent"] == 8 and sent["failed"] == []
    stats = run_process(env)
    assert stats["consumed"] == 8 and stats["dead"] == 0
    chunks, sightings = chunks_topic(settings, names)
    assert len({c.article_id for c in chunks}) == 8
    assert len(chunks) == len({c.id for c in chunks}) > 8 * 2
    assert all(1 <= c.sentence_end - c.sentence_start <= 5 and c.source == "benchmark" for c in chunks)
    assert all(c.day >= 19900101 and c.published.endswith("Z") for c in chunks)

    newskg_json("ingest", "files", str(FIXTURES), "--source", "benchmark", env=env)
    again = run_process(env)  # a new process: the dedup index is rebuilt from the signature log
    assert again["consumed"] == 8 and again["dead"] == 0
    after, sightings_after = chunks_topic(settings, names)
    assert len(after) == len(chunks)  # zero new chunks
    assert len(sightings_after) == len(sightings)  # and zero new sightings
    report = {t["name"]: t for t in newskg_json("topics", env=env)["topics"]}
    assert report[names["articles"]]["messages"] == 16
    assert report[names["articles"]]["lag"] == {settings.consumer_group("process"): 0}  # this test's own group


def test_republished_story_is_one_chunk_linked_to_both_articles(topics, tmp_path):
    env, settings, names = topics
    first = tmp_path / "alpha.jsonl"
    first.write_text(
        json.dumps({"url": "https://alpha.example/doja", "text": STORY, "published": "2023-08-31", "source": "alpha"})
    )
    edited = STORY.replace("several friends", "a few friends").replace("Thursday night", "Thursday evening")
    second = tmp_path / "beta.jsonl"
    second.write_text(
        json.dumps({"url": "https://beta.example/paris", "text": edited, "published": "2023-09-01", "source": "beta"})
    )
    newskg_json("ingest", "files", str(first), env=env)
    run_process(env)
    kept, _ = chunks_topic(settings, names)
    newskg_json("ingest", "files", str(second), env=env)
    run_process(env)
    chunks, sightings = chunks_topic(settings, names)
    assert chunks == kept and {c.source for c in chunks} == {"alpha"}
    beta_id = raw_article_id(RawArticle(url="https://beta.example/paris", text=edited, fetched_at="2023-09-01"))
    assert sightings and all(s.source == "beta" and s.day == 20230901 and s.similarity >= 0.7 for s in sightings)
    assert {s.chunk_id for s in sightings} == {c.id for c in chunks}  # every kept chunk now has both articles
    assert {s.article_id for s in sightings} == {beta_id}

    # beta is made only of near-duplicates: ingesting it again (a new process, the state replayed from the dedup
    # log) emits nothing at all, neither chunks nor sightings.
    newskg_json("ingest", "files", str(second), env=env)
    again = run_process(env)
    assert again["consumed"] == 1 and again["produced"] == 0
    assert chunks_topic(settings, names) == (chunks, sightings)


def test_unreadable_files_are_dead_letters_from_the_source_and_the_run_goes_on(topics, tmp_path):
    """review finding: files — an empty `.html`/`.txt`, a corrupt `.gz` (`zlib.error` is no `OSError`) or a JSONL
    line whose URL has a bad port aborted `ingest files` mid-run; each is now one dead letter (stage `files`) with
    its reason, the good input after it is sent, and the process stage takes it without a dead letter."""
    env, settings, names = topics
    (tmp_path / "a_empty.html").write_bytes(b"")
    (tmp_path / "b_blank.txt").write_text("  \n")
    (tmp_path / "c_corrupt.html.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"not deflate at all")
    lines = [
        {"url": "http://h:abc/x", "text": STORY, "published": "2023-08-31"},
        {"url": "https://good.example/jsonl", "text": STORY, "published": "2023-08-31"},
    ]
    (tmp_path / "d_mixed.jsonl").write_text("\n".join(json.dumps(line) for line in lines))
    (tmp_path / "e_good.txt").write_text(STORY.replace("Doja Cat", "The band"))
    sent = newskg_json("ingest", "files", str(tmp_path), "--date", "2023-08-31", env=env)
    assert (sent["sent"], sent["dead_letters"], sent["failed"]) == (2, 4, [])
    letters = [DeadLetter.from_bytes(r.value) for r in read_topic(kafka_options(settings), names["dlq"])]
    assert sorted((d.key.rsplit("/", 1)[1], d.reason, d.stage) for d in letters) == [
        ("a_empty.html", "empty_file", "files"),
        ("b_blank.txt", "empty_file", "files"),
        ("c_corrupt.html.gz", "corrupt_gzip", "files"),
        ("d_mixed.jsonl:1", "invalid_url", "files"),
    ]
    stats = run_process(env)
    assert stats["consumed"] == 2 and stats["dead"] == 0


def test_bad_input_goes_to_the_dead_letter_topic_and_the_stage_keeps_consuming(topics):
    env, settings, names = topics
    env = {**env, "NEWSKG_MAX_PAGE_BYTES": "20000"}
    producer = RecordProducer(kafka_options(settings))
    good = RawArticle(
        url="https://good.example/a",
        text=STORY,
        published="2023-08-31",
        source="good",
        fetched_at="2023-08-31T12:00:00Z",
    )

    def record(**kw) -> bytes:
        return RawArticle(**({"fetched_at": "2023-08-31T12:00:00Z", "source": "bad"} | kw)).to_bytes()

    newer = json.loads(good.to_bytes()) | {"schema_version": 99}
    bad = {
        "malformed_json": b'{"kind": "RawArticle", "text": ',
        "undecodable_bytes": b'{"text": "\xff\xfe\xfa"}',
        "binary_payload": b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\x00",
        "too_large": record(url="https://big.example/", text="word " * 10000, published="2023-08-31"),
        "empty_extraction": record(
            url="https://empty.example/", html="<html><body><nav>Home</nav></body></html>", published="2023-08-31"
        ),
        "unparseable_date": record(url="https://date.example/", text=STORY, published="31st of Smarch"),
        "missing_date": record(url="https://nodate.example/", text=STORY),
        "unsupported_schema_version": json.dumps(newer).encode(),
        "invalid_record": b'{"kind": "RawArticle", "fetched_at": "2023-08-31", "url": "https://x.example/"}',
    }
    producer.send_all(names["articles"], [(f"bad-{reason}", value) for reason, value in bad.items()] + [("good", good)])
    stats = run_process(env)
    assert stats["consumed"] == len(bad) + 1 and stats["dead"] == len(bad)
    letters = [DeadLetter.from_bytes(r.value) for r in read_topic(kafka_options(settings), names["dlq"])]
    by_key = {dl.key: dl for dl in letters}
    for reason in bad:
        letter = by_key[f"bad-{reason}"]
        assert letter.reason == reason, (reason, letter.detail)
        assert letter.topic == names["articles"] and letter.offset >= 0 and letter.stage == "process"
        assert letter.payload_bytes == len(bad[reason])
    chunks, _ = chunks_topic(settings, names)
    assert chunks and {c.article_id for c in chunks} == {raw_article_id(good)}


def test_crash_after_write_before_commit_yields_the_same_chunks(topics, isolated):
    """Kill the stage between the acknowledged write and the commit: the re-delivered articles lose nothing and
    add nothing new: what they emit again is the very records they emitted (ingest/process/dedup.py "resend",
    so a broker that lost the first copies is repaired; the extract stage skips a chunk record it wrote whole)."""
    from newskg.pipeline import build_runners

    env, settings, names = topics
    newskg_json("ingest", "files", str(FIXTURES), env=env)
    with Wiring(settings) as wiring:
        crashed = build_runners(wiring, ["process"])[0]
        records = []
        while not records:
            records = crashed.consumer.poll(timeout_ms=1000)
        output = crashed.stage.handle(records)
        crashed.producer.send_all(names["chunks"], [(key, rec) for _, key, rec in output.messages])
        crashed.stage.acknowledged(output)
    # dies here: the bundle closes the consumer, no commit
    before, _ = chunks_topic(settings, names)

    stats = run_process(env)
    assert stats["consumed"] == 8  # everything re-delivered (the crash committed nothing)
    after, _ = chunks_topic(settings, names)
    assert {c.id for c in after} >= {c.id for c in before}
    copies: dict[str, list[object]] = {}
    for chunk in after:
        copies.setdefault(chunk.id, []).append(chunk)
    assert all(all(copy == same[0] for copy in same) for same in copies.values())  # identical records only

    fresh = isolated.fresh(**WIDE_WINDOW)
    fresh_env, fresh_settings, fresh_names = fresh.env, fresh.settings, fresh.topics
    newskg_json("ingest", "files", str(FIXTURES), env=fresh_env)
    run_process(fresh_env)
    clean, _ = chunks_topic(fresh_settings, fresh_names)
    assert {c.id for c in after} == {c.id for c in clean}  # the same chunks as a run that never crashed


def test_cli_reports_bad_dates_clearly(topics):
    env, _, _ = topics
    result = newskg("ingest", "files", str(FIXTURES), "--date", "yesterday-ish", env=env, check=False)
    assert result.returncode == 2 and "--date" in result.stderr
