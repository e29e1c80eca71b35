"""Wiring of the streaming stages: topics, consumers, producers and stage objects, built from settings."""

from __future__ import annotations

from core.settings import Settings
from ingest.kafka.admin import TopicAdmin
from ingest.kafka.consumer import GroupConsumer
from ingest.kafka.producer import RecordProducer
from ingest.kafka.stage import StageRunner
from ingest.process.dedup import DedupIndex
from ingest.process.signature_log import SignatureLog
from ingest.process.stage import GROUP as PROCESS_GROUP
from ingest.process.stage import ProcessStage
from newskg.wiring import kafka_options

STAGES = ("process",)


def project_topics(settings: Settings) -> list[str]:
    return [settings.topic_articles, settings.topic_chunks, settings.topic_dlq, settings.topic_dedup]


def ensure_topics(settings: Settings) -> None:
    admin = TopicAdmin(kafka_options(settings))
    try:
        admin.ensure_topics(project_topics(settings), settings.topic_partitions, settings.topic_replication)
    finally:
        admin.close()


def process_runner(settings: Settings) -> StageRunner:
    options = kafka_options(settings)
    producer = RecordProducer(options)
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    stage = ProcessStage(settings, index, SignatureLog(options, settings.topic_dedup, producer))
    consumer = GroupConsumer(options, PROCESS_GROUP, [settings.topic_articles],
                             max_poll_records=settings.process_batch_size)
    return StageRunner(stage, consumer, producer, settings.topic_dlq)


def build_runners(settings: Settings, names: list[str]) -> list[StageRunner]:
    ensure_topics(settings)
    builders = {"process": process_runner}
    return [builders[name](settings) for name in names]
