"""A stage runner whose broker is SIGKILLed and restarted under it right after a write: noida-db 0.2.3 loses the
writes of its last second or so (acknowledged with acks=all, seen here: 100 of 100 gone when killed at once, none
after 3 s) and with them the producer's sequence numbers, so the runner's next write fails with kafka-python's
OutOfOrderSequenceNumberError (Kafka error 45), which kafka-python does not retry. The runner treats it as an
outage: it rebuilds its producer, sends the held batch again and only then commits, so every message the broker
still holds upstream arrives downstream and the loop never stops. A private broker, started and killed here (the
shared session broker is not touched)."""

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kafka import KafkaConsumer, TopicPartition
from kafka.errors import KafkaError

from newskg.core.records import DeadLetter, RawArticle, decode_any
from newskg.core.settings import Settings
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.kafka.stage import Outgoing, Stage, StageOutput, StageRunner, kafka_outage
from newskg.services.manager import ServiceManager
from newskg.wiring import Wiring, kafka_options

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

IN, OUT, DLQ = "restart.in", "restart.out", "restart.dlq"
# noida-db keeps what it acknowledged more than about a second before a kill -9. Input published within that second
# is lost too, and the runner's consumer, then past the shortened log's end, would skip what is published after
# the restart: the broker's loss, not the runner's (a replicated Kafka keeps it), so the input is let settle first.
UPSTREAM_PERSIST_S = 3.0


class CopyStage(Stage[None]):
    """Writes each message it reads, as it is, to OUT: nothing of its own to lose or double."""

    name = "copy"

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[None]:
        messages = tuple(Outgoing(OUT, (r.key or b"").decode(), decode_any(r.value or b"")) for r in records)
        return StageOutput(messages, tuple[DeadLetter, ...](), None)


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[tuple[Settings, ServiceManager]]:
    settings = Settings(data_dir=tmp_path / "data", _env_file=None)
    manager = ServiceManager(settings)
    manager.up(only={"broker"})
    try:
        yield settings, manager
    finally:
        manager.down()


def _publish(settings: Settings, values: range) -> None:
    with Wiring(settings) as wiring:
        wiring.producer().send_all(IN, [(f"article-{v % 3}", _article(v)) for v in values])


def _article(number: int) -> RawArticle:
    return RawArticle(text=str(number), source="wire", fetched_at="2024-03-01T08:00:00Z", published="2024-03-01")


def _values(settings: Settings, topic: str) -> set[int]:
    records = [decode_any(r.value or b"") for r in read_topic(kafka_options(settings), topic, timeout_s=30)]
    return {int(r.text) for r in records if isinstance(r, RawArticle)}


def _step_until_copied(runner: StageRunner[None], settings: Settings, must: set[int], timeout_s: float) -> None:
    """Step until OUT holds `must` and everything IN holds (the runner raises if it gives up: the bug held off)."""
    deadline = time.monotonic() + timeout_s
    while not (copied := _values(settings, OUT)) >= must | _values(settings, IN):
        assert time.monotonic() < deadline, f"copied {sorted(copied)}, expected {sorted(must)}"
        for _ in range(5):
            runner.step(timeout_ms=500)


def _step_until_written(runner: StageRunner[None], produced: int, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while runner.stats.produced < produced:
        assert time.monotonic() < deadline, f"{runner.stats.produced} written, expected {produced}"
        runner.step(timeout_ms=500)


def _back_inside_the_log(runner: StageRunner[None], consumer: GroupConsumer, timeout_s: float = 180) -> None:
    """Once the restarted broker answers: where the consumer's position lies past a partition's log end, back to
    that end. Under load the broker can lose more than its last second, the input too (UPSTREAM_PERSIST_S is then
    not enough), and noida-db answers a fetch past the end with nothing rather than "out of range": the consumer
    would wait there and skip what the next publishes put below it. That is the broker's loss, not the runner's (a
    replicated Kafka keeps the input); it made this test flaky. Under a full suite's load the broker may not tell
    the ends for minutes (the group rejoining): then the test goes on as it did before, with only that risk."""
    deadline = time.monotonic() + timeout_s
    kafka = consumer._consumer  # the positions and the log's ends, which GroupConsumer has no need to expose
    while not (ends := _log_ends(consumer, kafka)) and time.monotonic() < deadline:
        runner.step(timeout_ms=500)
    for tp, end in ends.items():
        # with a timeout: without one a member's position() may wait for the group coordinator for ever
        try:
            with consumer._watchdog.bounding("position", 10.0):
                at = kafka.position(tp, timeout_ms=10_000)
        except KafkaError:  # given up by the watchdog: this partition is left as it is
            at = None
        if at is not None and at > end:
            consumer.rewind(tp, end)


def _log_ends(consumer: GroupConsumer, kafka: KafkaConsumer) -> dict[TopicPartition, int]:
    """Each assigned partition's log end; empty while the consumer holds none or the broker does not answer."""
    try:
        assigned = list(kafka.assignment())
        # under the consumer's watchdog: kafka-python 3.0.12 may not return from end_offsets(timeout_ms) at all
        with consumer._watchdog.bounding("end offsets", 2.0):
            return kafka.end_offsets(assigned, timeout_ms=2_000) if assigned else {}
    except KafkaError:  # not reconnected yet, or the watchdog gave the call up
        return {}


def test_a_runner_whose_broker_lost_the_producer_state_rebuilds_its_producer_and_loses_nothing(broker):
    settings, manager = broker
    TopicAdmin(kafka_options(settings)).ensure_topics([IN, OUT, DLQ], partitions=2)
    _publish(settings, range(20))
    with Wiring(settings) as wiring:
        producer = wiring.producer()
        consumer = wiring.consumer(settings.consumer_group("restart"), "copy", [IN])
        runner = StageRunner(CopyStage(), consumer, producer, DLQ, kafka_outage)
        _step_until_copied(runner, settings, set(range(20)), 120)
        assert producer.generation == 0

        _publish(settings, range(20, 30))
        time.sleep(UPSTREAM_PERSIST_S)  # the input is kept: only the runner's own writes fall in the lost second
        _step_until_written(runner, runner.stats.produced + 10)  # acknowledged, committed: the sequences moved on
        port = manager.state.remembered_ports()
        manager.kill("broker")  # at once: the broker loses its last writes and the producer's sequence numbers
        manager.up(only={"broker"})
        # on another port the clients, which know the old address, would poll a closed port until the timeout
        assert manager.state.remembered_ports() == port, "the broker came back on another port"
        _back_inside_the_log(runner, consumer)
        _publish(settings, range(30, 50))
        _step_until_copied(runner, settings, set(range(20)) | set(range(30, 50)), 180)

        assert producer.generation >= 1  # the broker did refuse the old producer's sequence: it was rebuilt
        assert runner.held is None
