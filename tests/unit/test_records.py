import json

import pytest

from newskg.core.records import (
    RECORD_TYPES,
    SCHEMA_VERSION,
    Article,
    ArticleMemory,
    Chunk,
    ChunkSighting,
    DeadLetter,
    DedupRelease,
    DedupSighting,
    DedupSignature,
    Entity,
    IndexOp,
    Interaction,
    LinkingEntry,
    LinkJournal,
    Mention,
    RawArticle,
    RecordError,
    decode_any,
)

NOW = "2023-08-31T10:00:00Z"

SAMPLES = [
    RawArticle(
        url="https://example.com/a", html="<p>Doja Cat</p>", source="example", fetched_at=NOW, published="2023-08-30"
    ),
    Article(
        id="a_1",
        url="https://example.com/a",
        title="T",
        text="Body “quoted” ünïcode",
        published=NOW,
        published_day=20230831,
        source="example",
        source_id="s_1",
        ingested_at=NOW,
        ingested_ms=1,
    ),
    Chunk(
        id="c_1",
        text="One. Two.",
        sentences=["One.", "Two."],
        article_id="a_1",
        article_ids=["a_1"],
        source="example",
        source_id="s_1",
        day=20230831,
        published=NOW,
        ingested_at=NOW,
        ingested_ms=1,
        sentence_start=0,
        sentence_end=2,
        entity_ids=["e_1"],
    ),
    ChunkSighting(
        chunk_id="c_1",
        article_id="a_2",
        source="other",
        source_id="s_2",
        day=20230901,
        published=NOW,
        ingested_at=NOW,
        ingested_ms=2,
        similarity=0.93,
    ),
    DedupSignature(chunk_id="c_1", article_id="a_1", num_perm=2, minhash="AAAAAAAAAAA=", day=20230831),
    DedupSighting(chunk_id="c_9", article_id="a_2", kept_chunk_id="c_1", day=20230901),
    DedupRelease(chunk_id="c_1", ingested_ms=1, day=20230901, reason="graph_write_error"),
    Mention(text="Doja Cat", start=0, end=8, label="PERSON", entity_id="e_1"),
    Entity(id="e_1", name="Doja Cat", type="PERSON", aliases=["Doja"]),
    Interaction(
        id="i_1",
        subject_id="e_1",
        subject_name="Doja Cat",
        object_id="e_2",
        object_name="Choupette",
        text="Doja Cat dressed as Choupette",
        event_day=20230831,
        published_day=20230831,
        ingested_at=NOW,
        ingested_ms=1,
        variant="M0",
        chunk_ids=["c_1"],
    ),
    DeadLetter(
        reason="malformed_json",
        stage="process",
        topic="news.articles",
        partition=0,
        offset=7,
        key="k",
        payload_excerpt="{",
        payload_bytes=1,
        at=NOW,
    ),
    LinkingEntry(
        journal_id="lj_1",
        chunk_id="c_1",
        journal=LinkJournal(
            article_id="a_1",
            seen=(20230831, 1),
            context=["dressed"],
            ops=[IndexOp(op="add", entity_id="e_1", text="Doja Cat", kind="PERSON")],
            memory=ArticleMemory(linked={"doja cat": "e_1"}),
        ),
    ),
]


@pytest.mark.parametrize("record", SAMPLES, ids=lambda r: r.KIND)
def test_json_round_trip(record):
    data = record.to_bytes()
    payload = json.loads(data)
    assert payload["kind"] == record.KIND
    assert payload["schema_version"] == SCHEMA_VERSION
    assert type(record).from_bytes(data) == record
    assert decode_any(data) == record


def test_every_record_kind_has_a_sample():
    assert {r.KIND for r in SAMPLES} == set(RECORD_TYPES)


def test_newer_schema_version_is_rejected_with_a_reason():
    payload = json.loads(SAMPLES[1].to_bytes())
    payload["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(RecordError, match="schema_version"):
        Article.from_bytes(json.dumps(payload))


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"{not json", "malformed JSON"),
        (b"\xff\xfe\x00garbage", "undecodable"),
        (b"[1, 2]", "expected an object"),
        (b'{"kind": "Chunk"}', "expected a RawArticle"),
    ],
)
def test_bad_bytes_raise_record_error(data, reason):
    with pytest.raises(RecordError, match=reason):
        RawArticle.from_bytes(data)


def test_raw_article_needs_content():
    with pytest.raises(RecordError, match="html or text"):
        RawArticle.from_bytes(json.dumps({"kind": "RawArticle", "fetched_at": NOW, "url": "https://x.y"}))


def test_unknown_fields_are_rejected():
    payload = json.loads(SAMPLES[5].to_bytes()) | {"surprise": 1}
    with pytest.raises(RecordError):
        Entity.from_bytes(json.dumps(payload))


def test_day_keys_are_validated():
    with pytest.raises(ValueError):
        Interaction.model_validate(json.loads(SAMPLES[6].to_bytes()) | {"event_day": 123})
