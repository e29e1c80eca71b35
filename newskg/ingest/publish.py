"""Producers of the articles topic share this: keyed by article id, acks=all, flushed before reporting success.
An item a source rejected (its value a DeadLetter) goes to the dead-letter topic instead."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from newskg.core.records import DeadLetter
from newskg.ingest.kafka.client import KafkaError, SendFuture
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.sources.files import SourceItem


@dataclass
class PublishReport:
    sent: int = 0
    raw: int = 0  # items sent as raw bytes, which the process stage will dead-letter
    dead_letters: int = 0  # items the source rejected, sent to the dead-letter topic with their reason
    failed: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])  # (origin, error) the broker refused


class ArticlePublisher:
    def __init__(self, producer: RecordProducer, topic: str, dlq_topic: str | None = None):
        self.producer = producer
        self.topic = topic
        self.dlq_topic = dlq_topic

    def publish(
        self, items: Iterable[SourceItem], on_item: Callable[[SourceItem], None] | None = None
    ) -> PublishReport:
        report = PublishReport()
        pending: list[tuple[SourceItem, SendFuture]] = []
        for item in items:
            topic = self._topic(item)
            if topic is None:  # a caller that gave no dead-letter topic: reported, never dropped
                report.failed.append((item.origin, "a dead letter, and no dead-letter topic to send it to"))
            else:
                pending.append((item, self.producer.send(topic, item.key, item.value)))
            if on_item:
                on_item(item)
        self.producer.flush()
        for item, future in pending:
            try:
                future.get(timeout=30)
            except KafkaError as exc:  # e.g. over the broker's message size limit: reported, never silent
                report.failed.append((item.origin, f"{type(exc).__name__}: {exc}"))
                continue
            report.dead_letters += isinstance(item.value, DeadLetter)
            report.sent += not isinstance(item.value, DeadLetter)
            report.raw += isinstance(item.value, bytes)
        return report

    def _topic(self, item: SourceItem) -> str | None:
        """A source's dead letter goes to the dead-letter topic (None: this publisher was given none)."""
        return self.dlq_topic if isinstance(item.value, DeadLetter) else self.topic
