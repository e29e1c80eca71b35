"""A consumer-group member with manual commits: the stage commits only after its downstream write succeeded."""

from __future__ import annotations

import logging
from typing import Any

from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition
from kafka.consumer.fetcher import ConsumerRecord
from kafka.errors import CommitFailedError, KafkaError

log = logging.getLogger(__name__)


class GroupConsumer:
    def __init__(self, options: dict[str, Any], group: str, topics: list[str], max_poll_records: int = 200):
        # Short session/heartbeat: a group joins in ~3 s instead of ~23 s on Tansu (INFRA.md).
        self._consumer = KafkaConsumer(
            *topics, **options, group_id=group, enable_auto_commit=False, auto_offset_reset="earliest",
            session_timeout_ms=6000, heartbeat_interval_ms=1000, max_poll_records=max_poll_records,
            max_poll_interval_ms=600_000, fetch_max_bytes=16 * 1024 * 1024,
        )
        self.group = group

    def poll(self, timeout_ms: int = 1000) -> list[ConsumerRecord]:
        batches = self._consumer.poll(timeout_ms=timeout_ms)
        return [record for tp in sorted(batches, key=lambda t: (t.topic, t.partition)) for record in batches[tp]]

    def commit(self, records: list[ConsumerRecord]) -> bool:
        """Commit past the last record of each partition. A failed commit after a rebalance is logged, not raised:
        the records are re-delivered and the idempotent writes absorb them."""
        if not records:
            return True
        offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        for record in records:
            tp = TopicPartition(record.topic, record.partition)
            offsets[tp] = OffsetAndMetadata(max(record.offset + 1, offsets[tp].offset if tp in offsets else 0),
                                            "", -1)
        try:
            self._consumer.commit(offsets)
            return True
        except (CommitFailedError, KafkaError) as exc:
            log.warning("commit failed for group %s (records will be re-delivered): %s", self.group, exc)
            return False

    def lag(self) -> int:
        """Messages still to read on the partitions this member holds (0 when it holds none)."""
        assigned = list(self._consumer.assignment())
        if not assigned:
            return 0
        ends = self._consumer.end_offsets(assigned)
        return sum(max(0, ends[tp] - self._consumer.position(tp)) for tp in assigned)

    def assignment(self) -> set[TopicPartition]:
        return set(self._consumer.assignment())

    def close(self) -> None:
        self._consumer.close(autocommit=False)
