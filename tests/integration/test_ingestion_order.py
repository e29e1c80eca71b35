"""The ingestion-order gate (ingest/kafka/ingestion_order.py) on the real local broker: records spread over three
partitions come out of a group member in ingestion order across them, whatever the fetches return first, and a
member stopped midway leaves committed exactly what it handled, so its successor goes on in order."""

import json
import time

import pytest

from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.ingestion_order import IngestionOrder, Peeker, ingestion_key
from newskg.ingest.kafka.producer import RecordProducer
from newskg.wiring import kafka_options

pytestmark = pytest.mark.integration

RECORDS, ARTICLES = 90, 9


def _publish(options: dict, topic: str) -> set[int]:
    """Record i is of article i % ARTICLES, ingested at instant 1000 + i, published in that order: each partition
    holds its records in ingestion order, and a consumer gets them partition by partition, as its fetches return."""
    producer = RecordProducer(options)
    futures = []
    for i in range(RECORDS):
        body = json.dumps({"kind": "chunk", "ingested_ms": 1000 + i}).encode()
        futures.append(producer.send(topic, f"article-{i % ARTICLES}", body))
    producer.flush()
    partitions = {future.get(timeout=10).partition for future in futures}
    producer.close()
    return partitions


def _consume(consumer: GroupConsumer, order: IngestionOrder | None, want: int, timeout_s: float = 60) -> list[int]:
    """Poll, admit, commit what was admitted (as the stage runner does) until `want` records were handled."""
    instants: list[int] = []
    deadline = time.monotonic() + timeout_s
    while len(instants) < want and time.monotonic() < deadline:
        batch = consumer.poll(timeout_ms=500)
        if order is not None:
            # admitted: all before what is unread; within the batch, the stage orders by the same key
            batch = sorted(order.admit(batch), key=ingestion_key)
        batch = batch[: want - len(instants)]
        instants += [ingestion_key(r)[0] for r in batch]
        consumer.commit(batch)
    return instants


def test_records_come_out_in_ingestion_order_across_partitions_and_a_successor_goes_on(stack, isolated):
    options = kafka_options(stack.settings)
    topic = isolated.topics["chunks"]
    TopicAdmin(options).ensure_topics([topic], partitions=3)
    assert len(_publish(options, topic)) >= 2  # else there is no interleaving to fix

    as_polled = GroupConsumer(options, isolated.group("as-polled"), [topic], max_poll_records=7)
    plain = _consume(as_polled, None, RECORDS)
    as_polled.close()
    assert sorted(plain) == list(range(1000, 1000 + RECORDS)) and plain != sorted(plain)  # the problem is real

    group = isolated.group("ordered")
    first = GroupConsumer(options, group, [topic], max_poll_records=7)
    peeker = Peeker(options)
    head = _consume(first, IngestionOrder(first, peeker, cap=5), 40)
    first.close()  # stopped midway: what it polled beyond the 40 it handled was neither handled nor committed
    # (a buffer of at most 5 a partition: the member is rewound past it, read again later)
    successor = GroupConsumer(options, group, [topic], max_poll_records=7)
    rest = _consume(successor, IngestionOrder(successor, peeker), RECORDS - 40)
    successor.close()
    peeker.close()
    assert head + rest == list(range(1000, 1000 + RECORDS)), (head, rest)
