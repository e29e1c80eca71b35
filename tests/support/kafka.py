"""Producing records straight into a topic, as an upstream stage would."""

from __future__ import annotations

from newskg.core.records import Chunk
from newskg.core.settings import Settings
from newskg.ingest.kafka.producer import RecordProducer
from newskg.wiring import kafka_options


def publish(settings: Settings, topic: str, chunks: list[Chunk]) -> None:
    """Send the chunks under one key: one partition, in this order."""
    producer = RecordProducer(kafka_options(settings))
    try:
        producer.send_all(topic, [("one-key", c) for c in chunks])
    finally:
        producer.close()
