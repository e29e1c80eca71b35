"""Producers of the articles topic share this: keyed by article id, acks=all, flushed before reporting success."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ingest.kafka.client import KafkaError, SendFuture
from ingest.kafka.producer import RecordProducer
from ingest.sources.files import SourceItem


@dataclass
class PublishReport:
    sent: int = 0
    raw: int = 0  # items sent as raw bytes, which the process stage will dead-letter
    failed: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])  # (origin, error) the broker refused


class ArticlePublisher:
    def __init__(self, producer: RecordProducer, topic: str):
        self.producer = producer
        self.topic = topic

    def publish(
        self, items: Iterable[SourceItem], on_item: Callable[[SourceItem], None] | None = None
    ) -> PublishReport:
        report = PublishReport()
        pending: list[tuple[SourceItem, SendFuture]] = []
        for item in items:
            pending.append((item, self.producer.send(self.topic, item.key, item.value)))
            if on_item:
                on_item(item)
        self.producer.flush()
        for item, future in pending:
            try:
                future.get(timeout=30)
            except KafkaError as exc:  # e.g. over the broker's message size limit: reported, never silent
                report.failed.append((item.origin, f"{type(exc).__name__}: {exc}"))
                continue
            report.sent += 1
            report.raw += isinstance(item.value, bytes)
        return report
