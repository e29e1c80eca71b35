"""The call watchdog (ingest/kafka/watchdog.py) on kafka-python's own event loop, with no broker: a call whose task
the IO thread is not woken for (the lost wake-up of kafka-python 3.0.12) and a call whose task never ends. The
consumer's real broker paths, the broker restarted under it, are in tests/integration/test_producer_restart.py."""

import logging
import threading
from collections.abc import Awaitable, Iterator
from typing import cast

import pytest
from kafka.future import Future
from kafka.net.selector import NetworkSelector

from newskg.ingest.kafka.client import IoLoop, KafkaTimeoutError, io_loop
from newskg.ingest.kafka.watchdog import CallWatchdog

WHO = "consumer group g on broker 127.0.0.1:9092"


@pytest.fixture
def net() -> Iterator[NetworkSelector]:
    selector = NetworkSelector()
    selector.start()
    try:
        yield selector
    finally:
        selector.stop(timeout_ms=2000)
        selector.close()


def _resolved_from_another_thread(net: NetworkSelector, after_s: float) -> object:
    """A call (as the consumer's calls are made) whose task waits on a future another thread resolves."""
    future = Future()
    threading.Timer(after_s, lambda: future.success("records")).start()

    async def waits() -> object:
        return await cast(Awaitable[object], future)  # kafka-python's Future is awaitable, untyped

    return net.run(waits)


def _in_thread(call) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = call()
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, outcome


def test_kafka_python_loses_the_wake_up_of_a_task_resolved_from_another_thread(net):
    """The library's bug the watchdog is for: should this fail after an upgrade, the watchdog may have no more to do."""
    thread, outcome = _in_thread(lambda: _resolved_from_another_thread(net, 0.05))
    thread.join(1.0)
    assert thread.is_alive(), f"kafka-python's call returned by itself: {outcome}"
    net.wakeup()  # what the watchdog does
    thread.join(2.0)
    assert outcome == {"value": "records"}


def test_a_call_its_io_thread_was_not_woken_for_returns_once_the_watchdog_wakes_it(net, caplog):
    watchdog = CallWatchdog(IoLoop(net), WHO, nudge_after_s=0.2, give_up_after_s=30)
    caplog.set_level(logging.WARNING, logger="newskg.ingest.kafka.watchdog")

    def call() -> object:
        with watchdog.bounding("poll(100 ms)", 0.1):
            return _resolved_from_another_thread(net, 0.05)

    thread, outcome = _in_thread(call)
    thread.join(5.0)
    watchdog.close()
    assert outcome == {"value": "records"}
    assert "poll(100 ms) has not returned" in caplog.text and "waking kafka-python's IO thread" in caplog.text


def test_a_call_that_never_ends_raises_a_retriable_timeout_and_the_next_call_works(net, caplog):
    watchdog = CallWatchdog(IoLoop(net), WHO, nudge_after_s=0.1, give_up_after_s=0.5)
    never = Future()

    async def waits_forever() -> object:
        return await cast(Awaitable[object], never)

    def lost() -> object:
        with watchdog.bounding("poll(100 ms)", 0.1):
            return net.run(waits_forever)

    thread, outcome = _in_thread(lost)
    thread.join(5.0)
    assert not thread.is_alive()
    error = outcome.get("error")
    assert isinstance(error, KafkaTimeoutError) and error.retriable
    assert f"{WHO}: poll(100 ms) did not return 0.5 s after its timeout" in str(error)

    async def answers() -> str:
        return "next"

    with watchdog.bounding("commit", 1.0):
        assert net.run(answers) == "next"
    watchdog.close()


def test_a_client_without_kafka_pythons_loop_is_not_watched():
    assert io_loop(object()) is None
    watchdog = CallWatchdog(None, WHO)
    with watchdog.bounding("poll(100 ms)", 0.1):
        pass
    watchdog.close()


def test_the_loop_of_a_kafka_python_consumer_is_found():
    """KafkaConsumer keeps its loop as `_net` (private): io_loop must find it on the version installed."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers="127.0.0.1:1", api_version=(2, 8), group_id=None)
    try:
        assert isinstance(io_loop(consumer), IoLoop)
    finally:
        consumer.close()
