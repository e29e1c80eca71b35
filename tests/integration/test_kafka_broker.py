"""The Kafka adapter against the real local broker started by `newskg services up`."""

import time

import pytest
from kafka import TopicPartition

from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.producer import RecordProducer
from newskg.wiring import kafka_options

pytestmark = pytest.mark.integration


def _drain(consumer: GroupConsumer, want: int, timeout_s: float = 60) -> list:
    got, deadline = [], time.monotonic() + timeout_s
    while len(got) < want and time.monotonic() < deadline:
        batch = consumer.poll(timeout_ms=500)
        got.extend(batch)
        consumer.commit(batch)
    return got


def test_keyed_messages_consumer_group_and_manual_commits(stack, isolated):
    options = kafka_options(stack.settings)
    topic, group = isolated.topics["articles"], isolated.group("adapter")
    admin = TopicAdmin(options)
    assert admin.ensure_topics([topic], partitions=3) == [topic]
    assert admin.ensure_topics([topic], partitions=3) == []  # idempotent

    producer = RecordProducer(options)
    keys = [f"key-{i % 50}" for i in range(1000)]
    futures = [producer.send(topic, key, f"value-{i}".encode()) for i, key in enumerate(keys)]
    producer.flush()
    partition_of = {}
    for key, future in zip(keys, futures, strict=True):
        meta = future.get(timeout=10)
        assert partition_of.setdefault(key, meta.partition) == meta.partition  # a key stays on one partition
    assert len(set(partition_of.values())) == 3  # 50 keys spread over all 3 partitions

    consumer = GroupConsumer(options, group, [topic])
    records = _drain(consumer, 1000)
    consumer.close()
    assert len(records) == 1000
    assert sorted(r.value.decode() for r in records) == sorted(f"value-{i}" for i in range(1000))
    assert all(partition_of[r.key.decode()] == r.partition for r in records)
    assert admin.group_lag(group, topic) == 0
    assert sum(admin.end_offsets(topic).values()) == 1000

    # A later member of the same group starts from the committed offsets: nothing is re-delivered.
    second = GroupConsumer(options, group, [topic])
    leftovers = _drain(second, 1, timeout_s=8)
    second.close()
    assert leftovers == []

    # Producing the same keys again lands them on the same partitions.
    again = [producer.send(topic, key, b"again") for key in keys[:50]]
    producer.flush()
    assert [f.get(timeout=10).partition for f in again] == [partition_of[k] for k in keys[:50]]
    producer.close()

    report = {t.name: t for t in admin.report()}[topic]
    assert report.partitions == 3 and report.messages == 1050 and report.lag == {group: 50}
    admin.close()


def test_uncommitted_messages_are_redelivered(stack, isolated):
    """No data loss: a member that dies before committing leaves its records to the next member."""
    options = kafka_options(stack.settings)
    topic, group = isolated.topics["articles"], isolated.group("adapter")
    TopicAdmin(options).ensure_topics([topic], partitions=3)
    producer = RecordProducer(options)
    producer.send_all(topic, [(f"k{i}", f"v{i}".encode()) for i in range(30)])
    first = GroupConsumer(options, group, [topic])
    seen = []
    while len(seen) < 30:
        seen.extend(first.poll(500))
    first.close()  # no commit
    second = GroupConsumer(options, group, [topic])
    again = _drain(second, 30)
    second.close()
    assert sorted(r.value for r in again) == sorted(r.value for r in seen)
    assert {TopicPartition(r.topic, r.partition) for r in again} == {TopicPartition(topic, p) for p in range(3)}
