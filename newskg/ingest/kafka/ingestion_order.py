"""Hand a stage its records in ingestion order across the partitions it holds, whatever order they arrive in.

A consumer sees each partition in offset order, but how the partitions interleave depends on fetch timing: which
partition's batch came back first. For a stage whose output depends on what came before (the extract stage's alias
index learns from every chunk it links), that timing changed the graph: a chunk linked before an earlier-ingested
chunk of another partition could not learn from it (issue 29: about 1–2% of links moved between runs of one
consumer over the same records, `bench/determinism.py`).

So polled records wait in a buffer per partition, and a batch is what can come after nothing unread: the records up
to a watermark, the smallest frontier over the partitions this member holds. A partition's frontier is the order
key (ingestion instant, then partition and offset: a total order, `OrderKey`) of the last record it has buffered
(what it has not delivered yet comes after that: a partition is written in ingestion order); of the record at its
position when nothing of it is buffered but it has records left (peeked at by a reader in no group); none when it
is read to its end. The partition holding the watermark always has records at or below it, so a member never
stalls. A partition's buffer keeps at most `cap` records: the member is rewound to the first of the rest. Buffered
records are neither handled nor committed: a crash or a rebalance reads them again. Within a batch the extract
stage orders by the same key; the process stage merges the batch's partitions by it (`merged`), which keeps each
partition in offset order: then the sequence of batches is one function of the partitions' contents, whatever the
fetch timing, even where a partition is not in ingestion order (a backfill), where a sort of each batch is not.

Across replicas the gate orders each replica's own partitions only; what other replicas learn reaches this one
through the shared logs within one batch (extract/entities/link_log.py). Holding a replica until every other one
has passed an instant would make them take turns batch by batch."""

from __future__ import annotations

import heapq
import json
import logging
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, Protocol, cast

from newskg.ingest.kafka import client
from newskg.ingest.kafka.client import ConsumerRecord, TopicPartition

log = logging.getLogger(__name__)

# Where a record stands in ingestion order: (its ingestion instant, its partition, its offset). Records of one
# instant keep their partition's order (a stream backfilled at midnight gives whole days one instant), and across
# partitions the lower partition goes first: a total order that batch boundaries and fetch timing cannot change.
OrderKey = tuple[int, int, int]
EARLIEST = -1  # the instant of a record with none readable: it blocks nothing behind it and is handled first
BUFFER_CAP = 256  # records a partition keeps waiting; beyond, they are read again later (chunks: ~2 KB each)
PEEK_TIMEOUT_MS = 2000


def ingestion_key(record: ConsumerRecord) -> OrderKey:
    """(`ingested_ms`, partition, offset) of a record of the chunks topic; EARLIEST for one without an instant (it
    goes on to be dead-lettered). Read from the JSON without validating the record: the stage validates it."""
    try:
        value: object = json.loads(record.value or b"")
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read: the stage dead-letters it
        value = None
    instant = cast(dict[str, object], value).get("ingested_ms") if isinstance(value, dict) else None
    return (instant if isinstance(instant, int) else EARLIEST, record.partition, record.offset)


def merged(records: list[ConsumerRecord], key_of: Callable[[ConsumerRecord], OrderKey]) -> list[ConsumerRecord]:
    """A batch the gate handed on, its partitions merged by their heads' keys, each kept in offset order. Behind
    the gate, the batches in turn give the same sequence for any fetch timing (tests/unit/test_ingestion_order.py)."""
    by_partition: dict[tuple[str, int], list[ConsumerRecord]] = {}
    for record in records:
        by_partition.setdefault((record.topic, record.partition), []).append(record)
    return list(heapq.merge(*by_partition.values(), key=key_of))


class PartitionView(Protocol):
    """What the gate asks of the group member (ingest/kafka/consumer.py)."""

    def assignment(self) -> set[TopicPartition]: ...

    def unread(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """partition → its position, for those of `partitions` with records left to read."""
        ...

    def rewind(self, partition: TopicPartition, offset: int) -> None: ...


class HeadReader(Protocol):
    def key_at(self, partition: TopicPartition, offset: int) -> OrderKey | None: ...


class Peeker:
    """The order key of the record at an offset, read by a consumer in no group. What one fetch returns is kept
    (offset → key), so a partition behind the others is read ahead once, not once a batch."""

    def __init__(self, options: Mapping[str, Any], key_of: Callable[[ConsumerRecord], OrderKey] = ingestion_key):
        self._reader = client.consumer(options, group_id=None, enable_auto_commit=False)
        self._key_of = key_of
        self._known: dict[tuple[TopicPartition, int], OrderKey] = {}

    def key_at(self, partition: TopicPartition, offset: int) -> OrderKey | None:
        """None when the broker did not return the record in time."""
        if (partition, offset) not in self._known:
            self._read(partition, offset)
        return self._known.get((partition, offset))

    def _read(self, partition: TopicPartition, offset: int) -> None:
        self._known = {at: key for at, key in self._known.items() if at[0] != partition}  # one read ahead each
        self._reader.assign([partition])
        self._reader.seek(partition, offset)
        for records in self._reader.poll(timeout_ms=PEEK_TIMEOUT_MS).values():
            self._known.update(((TopicPartition(r.topic, r.partition), r.offset), self._key_of(r)) for r in records)

    def close(self) -> None:
        self._reader.close(autocommit=False)


class IngestionOrder:
    """The gate (module docstring). `admit` takes what a poll returned and gives the batch to handle now."""

    def __init__(
        self,
        partitions: PartitionView,
        peeker: HeadReader,
        key_of: Callable[[ConsumerRecord], OrderKey] = ingestion_key,
        cap: int = BUFFER_CAP,
    ):
        self.partitions, self.peeker, self.key_of, self.cap = partitions, peeker, key_of, cap
        self._buffers: dict[TopicPartition, deque[tuple[OrderKey, ConsumerRecord]]] = {}

    @property
    def buffered(self) -> int:
        """Records polled and not handed on yet."""
        return sum(len(b) for b in self._buffers.values())

    def admit(self, polled: list[ConsumerRecord]) -> list[ConsumerRecord]:
        held = self.partitions.assignment()
        self._buffers = {p: b for p, b in self._buffers.items() if p in held}  # given away: the new owner reads them
        for record in polled:
            self._buffer(record)
        self._trim()
        mark = self._watermark()
        return [] if mark is None else self._take_through(mark)

    def _buffer(self, record: ConsumerRecord) -> None:
        partition = TopicPartition(record.topic, record.partition)
        buffer = self._buffers.setdefault(partition, deque())
        if buffer and record.offset <= buffer[-1][1].offset:
            buffer.clear()  # read again from the committed offset (the partition went away and came back)
        buffer.append((self.key_of(record), record))

    def _trim(self) -> None:
        """A partition far ahead of the others keeps `cap` records waiting: the member is rewound to the first of the
        rest, read again once the others caught up. (Pausing the partition instead stalled kafka-python's fetches
        of the others: seen in tests/integration/test_ingestion_order.py.)"""
        for partition, buffer in self._buffers.items():
            if len(buffer) > self.cap:
                first_dropped = buffer[self.cap][1].offset
                while len(buffer) > self.cap:
                    buffer.pop()
                self.partitions.rewind(partition, first_dropped)

    def _watermark(self) -> OrderKey | None:
        """The smallest frontier (module docstring); None when a partition's head could not be read in time, or
        nothing is left."""
        buffers = [b for b in self._buffers.values() if b]
        frontiers, heads = [b[-1][0] for b in buffers], [b[0][0] for b in buffers]
        empty = self.partitions.assignment() - {p for p, b in self._buffers.items() if b}
        for partition, position in self.partitions.unread(empty).items():
            key = self.peeker.key_at(partition, position)
            if key is None:
                log.warning("could not read the head of %s[%d] in time: holding the batch", *partition)
                return None
            frontiers.append(key)
            heads.append(key)
        if not frontiers:
            return None
        # The earliest head goes first even if a partition's later records are not in ingestion order.
        return max(min(frontiers), min(heads))

    def _take_through(self, mark: OrderKey) -> list[ConsumerRecord]:
        """Each partition's buffered records up to the first one past `mark` (a partition is handled in offset
        order, so one that came out of order waits with those after it)."""
        batch: list[ConsumerRecord] = []
        for buffer in self._buffers.values():
            while buffer and buffer[0][0] <= mark:
                batch.append(buffer.popleft()[1])
        return batch
