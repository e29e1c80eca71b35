"""RecordProducer.rebuild: one new kafka-python producer per loss of the broker's producer state, however many
holders share the RecordProducer and saw it fail. kafka-python's producer is replaced by a stand-in here (the real
broker restart is in tests/integration/test_producer_restart.py)."""

import pytest

from newskg.ingest.kafka import producer as producer_module
from newskg.ingest.kafka.client import KafkaConnectionError, OutOfOrderSequenceNumberError, UnknownProducerIdError
from newskg.ingest.kafka.producer import RecordProducer, producer_state_lost

OPTIONS = {"bootstrap_servers": ["127.0.0.1:9"], "security_protocol": "PLAINTEXT", "client_id": "newskg"}


class KafkaProducerStandIn:
    def __init__(self, number: int):
        self.number, self.closed_with, self.sent = number, None, []

    def send(self, topic: str, *, key: bytes | None, value: bytes) -> object:
        self.sent.append((topic, key, value))
        return None

    def flush(self, timeout: float | None = None) -> None:
        pass

    def close(self, timeout: float | None = None) -> None:
        self.closed_with = timeout


class Builder:
    """Stands in for client.producer: every kafka-python producer built, in order; fails while the broker is down."""

    def __init__(self):
        self.built: list[KafkaProducerStandIn] = []
        self.broker_down = False

    def __call__(self, options, **config) -> KafkaProducerStandIn:
        if self.broker_down:
            raise KafkaConnectionError("111 ECONNREFUSED")
        self.built.append(KafkaProducerStandIn(len(self.built)))
        return self.built[-1]


@pytest.fixture
def builder(monkeypatch) -> Builder:
    builder = Builder()
    monkeypatch.setattr(producer_module, "broker_supports_idempotence", lambda options: True)
    monkeypatch.setattr(producer_module.client, "producer", builder)
    return builder


def test_the_errors_of_a_broker_that_lost_the_producer_state_call_for_a_rebuild():
    assert producer_state_lost(OutOfOrderSequenceNumberError("seq"))
    assert producer_state_lost(UnknownProducerIdError("pid"))
    assert not producer_state_lost(KafkaConnectionError("down"))  # an outage, but the producer is fine


def test_two_holders_seeing_the_same_failure_rebuild_once_and_send_on_the_new_producer(builder):
    built = builder.built
    shared = RecordProducer(OPTIONS)
    seen_by_runner = seen_by_dedup_log = shared.generation
    assert shared.rebuild(seen_by_runner) is True
    assert shared.rebuild(seen_by_dedup_log) is False  # already replaced since that failure: no second new id
    assert len(built) == 2 and shared.generation == 1
    assert built[0].closed_with == producer_module.CLOSE_GRACE_S and built[1].closed_with is None
    shared.send("news.chunks", "a", b"x")
    assert built[1].sent == [("news.chunks", b"a", b"x")] and built[0].sent == []
    assert shared.rebuild(1) is True and shared.generation == 2  # a later loss: rebuilt again


def test_a_rebuild_while_the_broker_is_gone_again_keeps_the_old_producer(builder):
    built = builder.built
    shared = RecordProducer(OPTIONS)
    builder.broker_down = True
    with pytest.raises(KafkaConnectionError):
        shared.rebuild(0)
    assert shared.generation == 0 and built[0].closed_with is None  # still the one in use, the next failure retries
    builder.broker_down = False
    assert shared.rebuild(0) is True and shared.generation == 1
