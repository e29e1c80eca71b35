"""The loop every consumer stage shares: poll a batch, handle it, write downstream and wait for the
acknowledgement, and only then commit the offsets (at-least-once delivery, exactly-once effect through
idempotent writes). Bad input becomes a dead letter; it never stops the loop."""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

from kafka.consumer.fetcher import ConsumerRecord

from core.records import DeadLetter, Record
from core.timeaxes import iso, utc_now
from ingest.kafka.consumer import GroupConsumer
from ingest.kafka.producer import RecordProducer

log = logging.getLogger(__name__)

EXCERPT_CHARS = 500


@dataclass
class StageOutput:
    messages: list[tuple[str, str | None, Record]] = field(default_factory=list)  # (topic, key, record)
    dead: list[DeadLetter] = field(default_factory=list)


def dead_letter(record: ConsumerRecord, stage: str, reason: str, detail: str) -> DeadLetter:
    value = record.value or b""
    key = record.key.decode("utf-8", "replace") if record.key else None
    return DeadLetter(reason=reason, detail=detail[:2000], stage=stage, topic=record.topic,
                      partition=record.partition, offset=record.offset, key=key,
                      payload_excerpt=value[:EXCERPT_CHARS].decode("utf-8", "replace"),
                      payload_bytes=len(value), at=iso(utc_now()))


class Stage(ABC):
    name: str

    @abstractmethod
    def handle(self, records: list[ConsumerRecord]) -> StageOutput:
        """Turn a batch into downstream writes; per-message failures become dead letters, never exceptions."""

    def acknowledged(self, output: StageOutput) -> None:  # noqa: B027 - optional hook
        """Called once the batch's output is acknowledged, before the commit."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release what the stage holds."""

    def on_idle(self) -> bool:
        """Called when every stage has caught up: finish deferred work (no offsets involved). True if it did
        something."""
        return False


@dataclass
class StageStats:
    consumed: int = 0
    produced: int = 0
    dead: int = 0
    batches: int = 0


class StageRunner:
    def __init__(self, stage: Stage, consumer: GroupConsumer, producer: RecordProducer, dlq_topic: str):
        self.stage = stage
        self.consumer = consumer
        self.producer = producer
        self.dlq_topic = dlq_topic
        self.stats = StageStats()

    def step(self, timeout_ms: int = 1000) -> int:
        """One poll-handle-write-commit cycle; returns how many messages it consumed."""
        records = self.consumer.poll(timeout_ms=timeout_ms)
        if not records:
            return 0
        output = self.stage.handle(records)
        items = [(topic, key, rec) for topic, key, rec in output.messages]
        items += [(self.dlq_topic, dl.key, dl) for dl in output.dead]
        futures = [self.producer.send(topic, key, rec) for topic, key, rec in items]
        self.producer.flush()
        for future in futures:
            future.get(timeout=30)  # raises: nothing is committed unless every write was acknowledged
        self.stage.acknowledged(output)
        self.consumer.commit(records)
        self.stats.consumed += len(records)
        self.stats.produced += len(output.messages)
        self.stats.dead += len(output.dead)
        self.stats.batches += 1
        return len(records)

    def idle(self) -> bool:
        """Holds partitions and has read everything on them."""
        return bool(self.consumer.assignment()) and self.consumer.lag() == 0

    def close(self) -> None:
        self.stage.close()
        self.consumer.close()


def run_stages(runners: list[StageRunner], until_idle: bool, stop: threading.Event | None = None,
               join_timeout_s: float = 90.0, on_progress=None) -> None:
    """Step every runner in turn in this thread. With until_idle, return once every runner has been idle for two
    rounds in a row (so a message one stage produced for the next is seen); otherwise run until `stop` is set."""
    stop = stop or threading.Event()
    started, quiet_rounds = time.monotonic(), 0
    while not stop.is_set():
        moved = sum(runner.step(timeout_ms=500) for runner in runners)
        if on_progress and moved:
            on_progress(runners)
        if not until_idle:
            continue
        if moved:
            quiet_rounds = 0
            continue
        if not all(r.consumer.assignment() for r in runners):
            if time.monotonic() - started > join_timeout_s:
                log.warning("gave up waiting for partition assignment after %.0f s", join_timeout_s)
                return
            continue
        quiet_rounds = quiet_rounds + 1 if all(r.idle() for r in runners) else 0
        if quiet_rounds >= 2:
            if any([r.stage.on_idle() for r in runners]):
                quiet_rounds = 0
                continue
            return
