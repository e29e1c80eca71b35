"""Read a whole topic from the beginning without joining a group (inspection, tests, the DLQ listing)."""

from __future__ import annotations

import time
from typing import Any

from newskg.ingest.kafka import client
from newskg.ingest.kafka.client import ConsumerRecord, TopicPartition


def read_topic(
    options: dict[str, Any], topic: str, limit: int | None = None, timeout_s: float = 120.0
) -> list[ConsumerRecord]:
    consumer, tps = client.log_reader(options, topic)
    try:
        if not tps:
            return []
        consumer.seek_to_beginning(*tps)
        ends = consumer.end_offsets(tps)
        records: list[ConsumerRecord] = []
        deadline = time.monotonic() + timeout_s
        while any(consumer.position(tp) < end for tp, end in ends.items()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{topic}: could not read up to the end offsets within {timeout_s} s")
            for batch in consumer.poll(timeout_ms=500).values():
                records.extend(r for r in batch if r.offset < ends[TopicPartition(r.topic, r.partition)])
            if limit and len(records) >= limit:
                break
        return sorted(records, key=lambda r: (r.partition, r.offset))[:limit]
    finally:
        consumer.close()
