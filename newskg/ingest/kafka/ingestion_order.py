"""Hand a stage its records in ingestion order across the partitions it holds, whatever order they arrive in.

A consumer sees each partition in offset order, but how the partitions interleave depends on fetch timing: which
partition's batch came back first. For a stage whose output depends on what came before (the extract stage's alias
index learns from every chunk it links), that timing changed the graph: a chunk linked before an earlier-ingested
chunk of another partition could not learn from it (issue 29: about 1–2% of links moved between runs of one
consumer over the same records, `bench/determinism.py`).

So polled records wait in a buffer per partition, and a batch is the next stretch of the partitions' merge by their
heads' order keys (ingestion instant, then partition and offset: a total order, `OrderKey`), each partition kept in
offset order: the gate runs that merge over what it has buffered and stops where the next step needs a record it has
not read (a partition whose buffered records ran out while it has records left, or whose head it only peeked at, by
a reader in no group, when nothing of it is buffered). A partition read to its end blocks nothing. So the batch is
as long as the buffers allow (up to the stage's batch size), even where a partition is not in ingestion order (a
backfill: pages ingested as published, their early instants behind the live stream's). The first gate cut each
partition at a watermark, the smallest frontier over the partitions (the key of a partition's last buffered record);
a backfilled record at the tail of a partition made that frontier earlier than every head, so each batch was the one
smallest head: `run all` on the demo's input handled 368 articles in 324 batches (issue 31). The partition holding
the smallest head always has it released or read next, so a member never stalls. A partition's buffer keeps at most
`cap` records: the member is rewound to the first of the rest. Buffered records are neither handled nor committed: a
crash or a rebalance reads them again. Both stages merge each batch by partition (`merged`; the gate hands it on in
that order already), so the sequence of batches is one function of the partitions' contents, whatever the fetch
timing and wherever the batches end, even where a partition is not in ingestion order, where a sort of each batch is
not.

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
        most: int | None = None,
    ):
        """`most`: the longest batch handed on (the stage's batch size, NEWSKG_PROCESS_BATCH_SIZE, as a poll's);
        the rest of what the merge could release waits in the buffers for the next one. None: no bound."""
        self.partitions, self.peeker, self.key_of, self.cap, self.most = partitions, peeker, key_of, cap, most
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
        return self._release(held)

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

    def _release(self, held: set[TopicPartition]) -> list[ConsumerRecord]:
        """The partitions' merge by their heads' keys over the buffered records, up to the first step that needs a
        record not read yet (module docstring) or `most` records, in merge order; nothing when a head could not be
        read in time. Where the batch ends does not change the sequence: the next one goes on with the merge."""
        unread = self.partitions.unread(held)  # partitions with records left past what was polled
        heads: list[tuple[OrderKey, TopicPartition, bool]] = []  # (key, partition, buffered: False when peeked)
        for partition in held:
            buffer = self._buffers.get(partition)
            if buffer:
                heads.append((buffer[0][0], partition, True))
            elif partition in unread:
                key = self.peeker.key_at(partition, unread[partition])
                if key is None:
                    log.warning("could not read the head of %s[%d] in time: holding the batch", *partition)
                    return []
                heads.append((key, partition, False))
        heapq.heapify(heads)
        batch: list[ConsumerRecord] = []
        while heads and (self.most is None or len(batch) < self.most):
            _, partition, buffered = heads[0]
            if not buffered:
                break  # the smallest head is not polled yet
            buffer = self._buffers[partition]
            batch.append(buffer.popleft()[1])
            if buffer:
                heapq.heapreplace(heads, (buffer[0][0], partition, True))
            elif partition in unread:
                break  # its next record, not read yet, may come before any other head (a partition out of order)
            else:
                heapq.heappop(heads)  # read to its end: it blocks nothing
        return batch
