"""The dedup log on the real broker: created compacted (and an older, uncompacted one brought up to date),
replayed into the index with progress and no time cap, holding only the publication window."""

import logging

import pytest

from newskg.core.records import DedupSighting
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.process import signature_log as signature_log_module
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.signature_log import Kept, SignatureLog
from newskg.ingest.process.stage import ProcessStage
from newskg.pipeline import ensure_topics
from newskg.wiring import kafka_options

pytestmark = pytest.mark.integration


def test_dedup_topic_is_compacted_new_or_existing(isolated):
    """noida-db stores and reports topic configs (describe_configs: DYNAMIC_TOPIC_CONFIG), so this checks what the
    broker holds; Tansu 0.6 accepts them at creation and reports none (its storage keeps no topic configs)."""
    settings = isolated.settings
    ensure_topics(settings)
    admin = TopicAdmin(kafka_options(settings))
    assert admin.topic_configs(settings.topic_dedup)["cleanup.policy"] == "compact"
    assert "cleanup.policy" not in admin.topic_configs(settings.topic_chunks)

    older = isolated.fresh().settings  # a dedup topic created before the log was compacted
    admin.ensure_topics([older.topic_dedup], partitions=3)
    assert "cleanup.policy" not in admin.topic_configs(older.topic_dedup)
    ensure_topics(older)
    assert admin.topic_configs(older.topic_dedup)["cleanup.policy"] == "compact"
    admin.close()


TEXTS = [
    f"Story number {i} about the council vote on the new tram line in district {i} and its costs." for i in range(40)
]


def test_replay_holds_the_window_logs_progress_and_makes_the_stage_ready(isolated, caplog, monkeypatch):
    settings = isolated.configured(dedup_window_days=30).settings
    ensure_topics(settings)
    options = kafka_options(settings)
    producer = RecordProducer(options)
    writer_index = DedupIndex(0.7, settings.dedup_num_perm)  # no window: writes every entry
    days = [20230101 + i % 28 for i in range(20)] + [20230301 + i % 28 for i in range(20)]  # Jan, then Mar
    kept = [
        Kept(f"c{i}", f"a{i}", writer_index.signer.sign(text), day)
        for i, (text, day) in enumerate(zip(TEXTS, days, strict=True))
    ]
    sighted = [
        DedupSighting(chunk_id="own-jan", article_id="b1", kept_chunk_id="c0", day=20230105),
        DedupSighting(chunk_id="own-mar", article_id="b2", kept_chunk_id="c30", day=20230320),
    ]
    writer = SignatureLog(options, settings.topic_dedup, producer)
    for start in range(0, len(kept), 7):
        writer.append(writer_index, kept[start : start + 7], sighted if start == 0 else [])
    writer.close()

    monkeypatch.setattr(signature_log_module, "PROGRESS_EVERY_S", 0.0)
    caplog.set_level(logging.INFO, logger="newskg.ingest.process.signature_log")
    index = DedupIndex(0.7, settings.dedup_num_perm, settings.dedup_window_days)
    reader = SignatureLog(options, settings.topic_dedup, producer)
    stage = ProcessStage(settings, index, reader)
    assert stage.ready
    # newest day 2023-03-28: the window holds 2023-02-27 on, i.e. the March entries only
    assert {f"c{i}" for i in range(40) if f"c{i}" in index} == {f"c{i}" for i in range(20, 40)}
    assert index.sightings == 1 and index.decide("own-mar", "b2", kept[30].minhash).kind == "again"
    messages = [r.getMessage() for r in caplog.records]
    assert any("replayed" in m and "of 42 entries" in m and "/s)" in m for m in messages)
    assert any("42 entries in" in m and "20 chunks and 1 sightings" in m for m in messages)
    reader.close()  # the test opened it; the stage never closes what it was given
    producer.close()
