"""The ingestion-order gate's merge (ingest/kafka/ingestion_order.py) over a scripted group member whose polls
return partitions in any order and any sizes: the batches, each merged by partition as both stages merge them, are
the partitions' merge by their heads (the records in ingestion order where each partition is); a batch is as long as
the buffers allow, a backfill at the partitions' tails included (issue 31); commits never pass a record not handed
on; a buffer over its cap rewinds the member.
The real broker path is tests/integration/test_ingestion_order.py."""

import heapq
import json
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from newskg.ingest.kafka.client import ConsumerRecord, TopicPartition
from newskg.ingest.kafka.ingestion_order import EARLIEST, IngestionOrder, OrderKey, ingestion_key, merged

TOPIC = "news.chunks"


def record(partition: int, offset: int, instant: int | None, key: str = "a") -> ConsumerRecord:
    value = json.dumps({"kind": "chunk"} | ({} if instant is None else {"ingested_ms": instant})).encode()
    return ConsumerRecord(TOPIC, partition, None, offset, 0, 0, key.encode(), value, [], None, -1, len(value), -1)


class Member:
    """A group member over fixed partitions: each poll returns the next few records of one partition, chosen by
    the seeded random source (as fetches come back in any order)."""

    def __init__(
        self, partitions: dict[int, list[ConsumerRecord]], seed: int | None = None, most: int = 4
    ):  # seed None: the lowest partition with records left first
        self.logs = {TopicPartition(TOPIC, p): records for p, records in partitions.items()}
        self.positions = dict.fromkeys(self.logs, 0)
        self.random, self.most = (None if seed is None else random.Random(seed)), most
        self.rewinds: list[tuple[int, int]] = []

    def poll(self) -> list[ConsumerRecord]:
        ready = [tp for tp in self.logs if self.positions[tp] < len(self.logs[tp])]
        if not ready:
            return []
        tp = min(ready) if self.random is None else self.random.choice(ready)
        start = self.positions[tp]
        size = self.most if self.random is None else self.random.randint(1, self.most)
        self.positions[tp] = min(len(self.logs[tp]), start + size)
        return self.logs[tp][start : self.positions[tp]]

    def assignment(self) -> set[TopicPartition]:
        return set(self.logs)

    def unread(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.positions[tp] for tp in partitions if self.positions[tp] < len(self.logs[tp])}

    def rewind(self, partition: TopicPartition, offset: int) -> None:
        self.rewinds.append((partition.partition, offset))
        self.positions[partition] = offset

    def key_at(self, partition: TopicPartition, offset: int) -> OrderKey | None:
        return ingestion_key(self.logs[partition][offset])


class Blind:
    """A head reader the broker never answers."""

    def key_at(self, partition: TopicPartition, offset: int) -> OrderKey | None:
        return None


def batches(member: Member, gate: IngestionOrder, rounds: int = 10_000) -> list[list[ConsumerRecord]]:
    """The non-empty batches the gate hands on until the member has read everything, each merged as the stages
    merge them (ingest/process/stage.py, extract/stage.py)."""
    handed: list[list[ConsumerRecord]] = []
    for _ in range(rounds):
        if batch := merged(gate.admit(member.poll()), ingestion_key):
            handed.append(batch)
        if not gate.buffered and not member.unread(member.assignment()):
            break
    return handed


def drain(member: Member, gate: IngestionOrder, rounds: int = 10_000) -> list[ConsumerRecord]:
    return [r for batch in batches(member, gate, rounds) for r in batch]


def streams(instants: list[int], partitions: int) -> dict[int, list[ConsumerRecord]]:
    """Articles ingested at `instants` (article i keyed "a<i>"), each on partition i % partitions, in order."""
    logs: dict[int, list[ConsumerRecord]] = {p: [] for p in range(partitions)}
    for i, instant in enumerate(sorted(instants)):
        log = logs[i % partitions]
        log.append(record(i % partitions, len(log), instant, f"a{i:04d}"))
    return logs


@settings(max_examples=60, deadline=None)
@given(
    instants=st.lists(st.integers(0, 50), min_size=1, max_size=60),
    partitions=st.integers(1, 4),
    seed=st.integers(0, 1000),
    cap=st.integers(1, 8),
)
def test_any_poll_order_gives_the_records_in_ingestion_order(instants, partitions, seed, cap):
    member = Member(streams(instants, partitions), seed)
    handed = drain(member, IngestionOrder(member, member, cap=cap))
    everything = [r for log in member.logs.values() for r in log]
    assert [ingestion_key(r) for r in handed] == sorted(ingestion_key(r) for r in everything)


@settings(max_examples=80, deadline=None)
@given(
    logs=st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=4),
    seed=st.integers(0, 1000),
    cap=st.integers(1, 8),
    most=st.none() | st.integers(1, 5),
)
def test_batches_merged_by_partition_give_one_sequence_for_any_poll_order_even_out_of_order(logs, seed, cap, most):
    """Both stages' order (ingest/process/order.py, extract/stage.py): partitions not in ingestion order (a
    backfill: pages ingested as published), polled in any order and sizes, buffers capped; each batch merged by
    partition (`merged`) gives the partitions' merge by their heads, a function of their contents alone. (Sorting
    each batch, as the extract stage did, gave another sequence for another poll order.) The gate hands each batch
    on merged already, and no longer than the stage's batch size (`most`): where it ends does not change the
    sequence."""
    partitions = {p: [record(p, o, instant) for o, instant in enumerate(log)] for p, log in enumerate(logs)}
    member = Member(partitions, seed)
    gate = IngestionOrder(member, member, cap=cap, most=most)
    handed: list[ConsumerRecord] = []
    while gate.buffered or member.unread(member.assignment()):
        batch = gate.admit(member.poll())
        assert merged(batch, ingestion_key) == batch and len(batch) <= (most or len(batch))
        handed += batch
    expected = heapq.merge(*partitions.values(), key=ingestion_key)
    assert [ingestion_key(r) for r in handed] == [ingestion_key(r) for r in expected]


@settings(max_examples=60, deadline=None)
@given(
    logs=st.lists(st.lists(st.integers(0, 30), max_size=12), min_size=1, max_size=4),
    tails=st.lists(st.integers(-20, -1), min_size=1, max_size=4),
)
def test_everything_polled_is_handed_on_in_one_batch_even_with_a_backfill_at_the_tails(logs, tails):
    """Issue 31: a backfilled page at the tail of a partition (published, so ingested, before the live stream's
    articles ahead of it) made the first gate's watermark earlier than every head, and each batch one record: 324
    batches for 368 articles in `run all` on the demo's input. With every partition read to its end, one admit
    hands on all of it, merged."""
    partitions = {
        p: [record(p, o, instant) for o, instant in enumerate(sorted(log) + tails[p : p + 1])]
        for p, log in enumerate(logs)
    }
    member = Member(partitions)
    polled = [r for log in partitions.values() for r in log]
    member.positions = {tp: len(log) for tp, log in member.logs.items()}  # one poll returned every record
    gate = IngestionOrder(member, member, cap=64)
    expected = list(heapq.merge(*partitions.values(), key=ingestion_key))
    assert gate.admit(polled) == expected and gate.buffered == 0


def test_a_partition_read_in_turns_is_handed_on_in_as_many_batches_as_polls_not_one_record_each():
    """The demo's shape (issue 31): three partitions in ingestion order, a backfilled page at each tail, polled 64
    records at a time from one partition: a batch ends only where the merge needs a partition not read yet."""
    instants = list(range(120))
    partitions = {p: [record(p, o, i) for o, i in enumerate([*instants[p::3], -1 - p])] for p in range(3)}
    member = Member(partitions, most=64)
    handed = batches(member, IngestionOrder(member, member, most=64))
    assert [r for b in handed for r in b] == list(heapq.merge(*partitions.values(), key=ingestion_key))
    assert [len(b) for b in handed] == [1, 1, 64, 57]  # the first gate: one batch per record (123)


def test_a_buffer_over_its_cap_rewinds_the_member_to_the_first_record_it_dropped():
    # partition 0 first: all six of it, far ahead of partition 1
    member = Member({0: [record(0, o, 100 + o) for o in range(6)], 1: [record(1, 0, 1)]}, most=6)
    gate = IngestionOrder(member, member, cap=2)
    assert gate.admit(member.poll()) == []  # partition 1's head (instant 1) is unread: nothing can go yet
    assert member.rewinds == [(0, 2)] and gate.buffered == 2


def test_a_partition_out_of_ingestion_order_does_not_stall_the_member():
    """A record later than the ones after it in its partition (two process replicas raced): partition 1's head
    (40) goes first, then partition 0 in its own order."""
    member = Member({0: [record(0, 0, 50), record(0, 1, 10)], 1: [record(1, 0, 40)]}, seed=1)
    assert [ingestion_key(r)[0] for r in drain(member, IngestionOrder(member, member))] == [40, 50, 10]


def test_a_record_without_an_instant_goes_first_and_partition_and_offset_break_ties():
    assert ingestion_key(record(3, 9, None)) == (EARLIEST, 3, 9)
    assert ingestion_key(record(0, 5, 7)) < ingestion_key(record(1, 0, 7)) < ingestion_key(record(1, 1, 7))
    junk = ConsumerRecord(TOPIC, 0, None, 4, 0, 0, None, b"\xff not json", [], None, -1, 10, -1)
    assert ingestion_key(junk) == (EARLIEST, 0, 4)
    deep = b"[" * 100_000 + b"]" * 100_000  # the adversarial corpus: json.loads raises RecursionError on it
    nested = ConsumerRecord(TOPIC, 1, None, 2, 0, 0, None, deep, [], None, -1, len(deep), -1)
    assert ingestion_key(nested) == (EARLIEST, 1, 2)


def test_records_of_one_instant_keep_their_partition_order_whatever_the_batches():
    """A day backfilled at midnight: every article has one instant; the order is the partitions' own."""
    logs = {p: [record(p, o, 500, f"z{9 - o}") for o in range(5)] for p in range(2)}
    for most in (1, 2, 5):
        member = Member(logs, seed=most, most=most)
        handed = drain(member, IngestionOrder(member, member))
        assert [(r.partition, r.offset) for r in handed] == [(p, o) for p in range(2) for o in range(5)]


def test_a_head_that_cannot_be_read_holds_the_batch_and_a_partition_given_away_is_forgotten():
    member = Member({0: [record(0, 0, 5)], 1: [record(1, 0, 1)]})
    blind = IngestionOrder(member, Blind())
    assert blind.admit(member.poll()) == [] and blind.buffered == 1
    del member.logs[TopicPartition(TOPIC, 0)]  # a rebalance gave partition 0 away
    assert blind.admit([]) == [] and blind.buffered == 0
