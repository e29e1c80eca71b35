"""The dedup index's durable, shared state: a Kafka topic of kept chunks' signatures, replayed into memory."""

from __future__ import annotations

import logging
import time
from typing import Any

from datasketch import LeanMinHash
from kafka import KafkaConsumer, TopicPartition

from core.records import DedupSignature, RecordError
from ingest.kafka.producer import RecordProducer
from ingest.process.dedup import DedupIndex

log = logging.getLogger(__name__)


class SignatureLog:
    def __init__(self, options: dict[str, Any], topic: str, producer: RecordProducer, timeout_s: float = 300.0):
        self.topic = topic
        self.timeout_s = timeout_s
        self._producer = producer
        self._reader = KafkaConsumer(**options, group_id=None, enable_auto_commit=False,
                                     auto_offset_reset="earliest", fetch_max_bytes=32 * 1024 * 1024)
        parts = self._reader.partitions_for_topic(topic) or set()
        self._tps = [TopicPartition(topic, p) for p in sorted(parts)]
        self._reader.assign(self._tps)
        self._reader.seek_to_beginning(*self._tps)

    def catch_up(self, index: DedupIndex) -> int:
        """Read every entry written so far (by any replica) into the index; returns how many were read."""
        if not self._tps:
            return 0
        ends = self._reader.end_offsets(self._tps)
        read, deadline = 0, time.monotonic() + self.timeout_s
        while any(self._reader.position(tp) < end for tp, end in ends.items()):
            if time.monotonic() > deadline:
                # Deciding without the shared state would re-emit duplicates: fail the batch instead.
                raise TimeoutError(f"dedup log {self.topic} not read to its end within {self.timeout_s} s")
            for records in self._reader.poll(timeout_ms=500).values():
                for record in records:
                    read += self._apply(index, record.value)
        return read

    def _apply(self, index: DedupIndex, value: bytes) -> int:
        try:
            entry = DedupSignature.from_bytes(value)
        except RecordError as exc:
            log.warning("skipping a bad dedup log entry: %s", exc)
            return 0
        if entry.num_perm != index.signer.num_perm:
            return 0  # written with other settings: not comparable
        index.add(entry.chunk_id, entry.article_id, index.signer.decode(entry.minhash))
        return 1

    def append(self, index: DedupIndex, kept: list[tuple[str, str, LeanMinHash]]) -> None:
        """Write kept signatures and wait for the acknowledgement; keyed by chunk id (compaction-friendly)."""
        items = [(chunk_id, DedupSignature(chunk_id=chunk_id, article_id=article_id,
                                           num_perm=index.signer.num_perm, minhash=index.signer.encode(mh)))
                 for chunk_id, article_id, mh in kept]
        if items:
            self._producer.send_all(self.topic, items)

    def close(self) -> None:
        self._reader.close()
