"""The stage loop's group handling and the pipeline thread of `serve --pipeline`, with stand-in runners (the real
broker paths are in tests/integration/test_group_restarts.py and test_serve_pipeline.py)."""

import logging
import threading
import time
from types import SimpleNamespace

import pytest

from newskg.ingest.kafka.stage import FLOWING_POLL_MS, IDLE_POLL_MS, AssignmentTimeout, run_stages
from newskg.pipeline import PipelineThread

WHO = "consumer group newskg-process on broker 127.0.0.1:9092 (member vm-process)"


class StandInRunner:
    def __init__(self, assigned: bool = True, error: Exception | None = None):
        self.consumer = SimpleNamespace(assignment=lambda: {"articles-0"} if assigned else set(), describe=lambda: WHO)
        self.stage = SimpleNamespace(name="process", on_idle=lambda: False)
        self.error = error

    def step(self, timeout_ms: int) -> int:
        time.sleep(0.01)
        if self.error:
            raise self.error
        return 0

    def idle(self) -> bool:
        return True

    def on_idle(self) -> bool:
        return self.stage.on_idle()


def test_until_idle_without_partitions_raises_naming_the_group_and_the_broker():
    started = time.monotonic()
    with pytest.raises(AssignmentTimeout) as gave_up:
        run_stages([StandInRunner(assigned=False)], until_idle=True, join_timeout_s=0.2)
    assert WHO in str(gave_up.value) and "NEWSKG_INSTANCE_ID" in str(gave_up.value)
    assert time.monotonic() - started < 5


def test_until_idle_with_partitions_and_nothing_to_read_returns():
    run_stages([StandInRunner()], until_idle=True, join_timeout_s=0.2)


def test_a_long_running_stage_without_partitions_warns_once_and_keeps_running(caplog):
    stop = threading.Event()
    threading.Timer(0.6, stop.set).start()
    with caplog.at_level(logging.WARNING, logger="newskg.ingest.kafka.stage"):
        run_stages([StandInRunner(assigned=False)], until_idle=False, stop=stop, join_timeout_s=0.1)
    assert [r.message for r in caplog.records if WHO in r.message] and len(caplog.records) == 1


class ScriptedRunner(StandInRunner):
    """Moves the scripted numbers of records, one per step, and notes each step's poll timeout."""

    def __init__(self, moves: list[int]):
        super().__init__()
        self.moves = moves
        self.timeouts: list[int] = []

    def step(self, timeout_ms: int) -> int:
        self.timeouts.append(timeout_ms)
        return self.moves.pop(0) if self.moves else 0


def test_while_records_flow_an_empty_poll_does_not_hold_up_the_next_stage():
    """`run all`: the process stage has read every article while the extract stage still has chunks to read; its
    empty poll must not cost a whole idle wait each round."""
    process, extract = ScriptedRunner([8, 0, 0, 0]), ScriptedRunner([0, 64, 28, 0])
    run_stages([process, extract], until_idle=True, join_timeout_s=1.0)  # pyright: ignore[reportArgumentType]  # a stand-in
    assert process.timeouts[:4] == [IDLE_POLL_MS, FLOWING_POLL_MS, FLOWING_POLL_MS, FLOWING_POLL_MS]
    assert extract.timeouts[:4] == process.timeouts[:4]
    assert process.timeouts[4] == IDLE_POLL_MS  # a round that moved nothing: back to the idle wait
    assert FLOWING_POLL_MS < IDLE_POLL_MS


def test_the_pipeline_thread_reports_a_stage_that_stopped():
    failures: list[str] = []
    stages = PipelineThread(
        [StandInRunner(error=ConnectionError("graph down"))], threading.Event(), 1.0, failures.append
    ).start()
    stages.thread.join(timeout=5)
    assert not stages.healthy()
    assert failures == ["ConnectionError: graph down"] == [stages.failure]


def test_the_pipeline_thread_asked_to_stop_is_no_failure():
    stop, failures = threading.Event(), []
    stages = PipelineThread([StandInRunner()], stop, 1.0, failures.append).start()
    time.sleep(0.1)
    assert stages.healthy()
    stop.set()
    stages.thread.join(timeout=5)
    assert failures == [] and stages.failure is None
