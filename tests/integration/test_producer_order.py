"""The producer keeps an article's messages in order: idempotent where the broker gives producer ids (both local
brokers do), else one request in flight. Against the session's noida-db broker and a Tansu broker started here."""

import socket
import subprocess
import time
from collections import defaultdict

import pytest

from newskg.ingest.kafka import producer as producer_module
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.kafka.reader import read_topic
from newskg.services.servers import TansuBroker, kafka_healthy
from newskg.wiring import kafka_options

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def tansu(tmp_path_factory):
    port = _free_port()
    command = TansuBroker().command(port, tmp_path_factory.mktemp("tansu"), {})
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not kafka_healthy(f"127.0.0.1:{port}"):
        assert time.monotonic() < deadline and proc.poll() is None, "tansu did not start"
        time.sleep(0.2)
    yield {"bootstrap_servers": [f"127.0.0.1:{port}"], "security_protocol": "PLAINTEXT", "client_id": "newskg"}
    proc.terminate()
    proc.wait(timeout=10)


def _send_in_order(options, topic: str, read_back: bool = True) -> tuple[RecordProducer, dict[str, list[int]]]:
    """700 messages on 7 keys, sent without waiting in between; returns each key's messages in log order (as read
    back, or as the broker's acknowledged offsets say)."""
    TopicAdmin(options).ensure_topics([topic], partitions=3)
    producer = RecordProducer(options, linger_ms=0)
    items = [(f"article-{i % 7}", i) for i in range(700)]
    futures = [producer.send(topic, key, str(i).encode()) for key, i in items]
    producer.flush()
    acked = [(key, future.get(timeout=30).offset, i) for (key, i), future in zip(items, futures, strict=True)]
    got: dict[str, list[int]] = defaultdict(list)
    if read_back:
        for record in read_topic(options, topic):
            got[record.key.decode()].append(int(record.value))
        assert sum(map(len, got.values())) == 700
    else:
        for key, _, i in sorted(acked, key=lambda a: (a[0], a[1])):
            got[key].append(i)
    return producer, got


def _producer_id(producer: RecordProducer) -> int:
    manager = producer._producer._transaction_manager  # kafka-python's holder of the broker-given producer id
    return manager.producer_id_and_epoch.producer_id if manager else -1


@pytest.mark.parametrize("broker", ["noida", "tansu"])
def test_idempotent_producer_where_the_broker_gives_producer_ids(broker, stack, isolated, request):
    options = kafka_options(stack.settings) if broker == "noida" else request.getfixturevalue("tansu")
    # Tansu 0.6 acknowledges every message with the right offset, but its end offsets and fetches lose records of
    # multi-record batches (seen here with and without idempotence): its order is checked on the acknowledgements.
    producer, got = _send_in_order(options, isolated.topics["articles"], read_back=broker == "noida")
    assert producer.idempotent
    assert producer._producer.config["enable_idempotence"] is True
    assert producer._producer.config["acks"] == -1
    assert _producer_id(producer) >= 0  # the broker handed out a producer id: batches carry sequence numbers
    assert all(values == sorted(values) for values in got.values())  # each key's messages in send order
    producer.close()


def test_without_broker_support_one_request_in_flight(stack, isolated, monkeypatch):
    options = kafka_options(stack.settings)
    monkeypatch.setitem(producer_module._support, ",".join(options["bootstrap_servers"]), False)
    producer, got = _send_in_order(options, isolated.topics["articles"])
    assert not producer.idempotent
    assert producer._producer.config["enable_idempotence"] is False
    assert producer._producer.config["max_in_flight_requests_per_connection"] == 1
    assert all(values == sorted(values) for values in got.values())
    producer.close()
