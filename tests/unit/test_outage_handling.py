"""Outages are waited out wherever they happen (a batch's handling, its writes, the M2 clock, the idle flush), poison
costs only its own record, a bug stops the stage: the runner (ingest/kafka/stage.py), the extract stage and the M2
scheduler, all asking core/failures.py. Stand-in consumer, producer and graph; the real servers are in
tests/integration/test_classifier_outages.py."""

import time
from types import SimpleNamespace

import httpx
import pytest
import redis.exceptions
from qdrant_client.http.exceptions import UnexpectedResponse

from newskg.core.llm.client import LLMOptions
from newskg.core.records import Chunk, DedupRelease
from newskg.extract.m2_scheduler import BATCH_FAILED
from newskg.extract.stage import WRITE_ERROR, ExtractRunner
from newskg.extract.variants.base import ChunkOnly
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.stage import Outgoing, Stage, StageOutput, StageRunner, run_stages
from tests.support.fuzz import consumer_record
from tests.support.llm import Script, scripted_client
from tests.unit.test_extract_guard import GOOD, chunk, stage
from tests.unit.test_m2_scheduler import NAMES, OBJ, SUBJ, Clock, PairGraph, answer

DEDUP = "news.dedup"
READONLY = redis.exceptions.ReadOnlyError("You can't write against a read only replica.")


def unavailable() -> UnexpectedResponse:
    return UnexpectedResponse(503, "Service Unavailable", b"restarting", httpx.Headers())


class Broker:
    """A consumer with batches to hand out and a producer that acknowledges everything, logging in order."""

    generation = 0

    def __init__(self, *batches: list[ConsumerRecord]):
        self.batches = list(batches)
        self.sent: list[tuple[str, object]] = []
        self.committed: list[list[int]] = []

    def poll(self, timeout_ms: int = 1000) -> list[ConsumerRecord]:
        return self.batches.pop(0) if self.batches else []

    def commit(self, records: list[ConsumerRecord]) -> bool:
        self.committed.append([r.offset for r in records])
        return True

    def send(self, topic: str, key: str | None, value: object) -> SimpleNamespace:
        self.sent.append((topic, value))
        return SimpleNamespace(get=lambda timeout=None: None)

    def flush(self) -> None:
        pass

    def assignment(self) -> set[str]:
        return {"t-0"}

    def lag(self) -> int:
        return 0


class FlakyStage(Stage[None]):
    """Handles a batch into one message; the first handlings raise what it is given."""

    name = "flaky"

    def __init__(self, *failures: BaseException):
        self.failures = list(failures)
        self.handled = 0

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[None]:
        self.handled += 1
        if self.failures:
            raise self.failures.pop(0)
        return StageOutput((Outgoing("out", None, DedupRelease(chunk_id="c", ingested_ms=1, day=20240301)),), (), None)


def retry_now(runner: StageRunner) -> None:
    assert runner.held is not None
    runner.held.retry_at = 0.0  # the backoff has passed


def test_review_finding_a_qdrant_503_holds_the_batch_uncommitted_and_undead_lettered_until_it_lands():
    """Review finding: a Qdrant 503 during a restart was no outage: the batch was dead-lettered and committed."""
    broker = Broker([consumer_record("news.chunks", b"{}", 7)])
    runner = StageRunner(FlakyStage(unavailable(), READONLY), broker, broker, "dlq")
    assert runner.step() == 0 and broker.sent == [] and broker.committed == []
    retry_now(runner)
    assert runner.step() == 0 and broker.sent == [] and broker.committed == []  # READONLY: held too
    retry_now(runner)
    assert runner.step() == 1 and [t for t, _ in broker.sent] == ["out"] and broker.committed == [[7]]
    assert runner.stats.dead == 0


def test_a_bug_outside_every_per_record_guard_stops_the_stage_loudly():
    broker = Broker([consumer_record("news.chunks", b"{}", 7)])
    runner = StageRunner(FlakyStage(AttributeError("a bug")), broker, broker, "dlq")
    with pytest.raises(AttributeError):
        runner.step()
    assert broker.sent == [] and broker.committed == []


def test_credentials_refused_stop_the_stage_and_dead_letter_nothing():
    refused = UnexpectedResponse(401, "Unauthorized", b"", httpx.Headers())
    broker = Broker([consumer_record("news.chunks", b"{}", 7)])
    with pytest.raises(UnexpectedResponse):
        StageRunner(FlakyStage(refused), broker, broker, "dlq").step()
    assert broker.sent == [] and broker.committed == []


def chunk_message(c: Chunk, offset: int) -> ConsumerRecord:
    return consumer_record("news.chunks", c.to_bytes(), offset)


def extract_stage(write, dedup_topic: str = DEDUP):
    """The M0 extract stage over a graph that is not there: `write` stands in for the graph + mirror write."""
    extract = stage()
    extract.options.dedup_topic = dedup_topic
    extract._split_written = lambda chunks: (chunks, [], [])  # nothing written before a restart
    extract._write = write
    return extract


def test_review_finding_an_outage_in_the_batch_write_propagates_instead_of_dead_lettering_the_batch():
    """Review finding: "a whole batch is written to the graph, then dead-lettered as graph_write_error and
    committed". A mirror (or graph) outage during the write now leaves `handle` for the runner to hold."""

    def write(extractions, sightings):
        raise unavailable()

    with pytest.raises(UnexpectedResponse):
        extract_stage(write).handle([chunk_message(chunk("c1", GOOD), 1)])


def test_review_finding_a_dead_lettered_chunk_releases_its_dedup_signature_with_its_dead_letter():
    """Review finding: "if the extract stage then dead-letters that chunk (e.g. a NUL byte → graph_write_error),
    later near-duplicates become sightings of a chunk that never exists". The stage's output carries a release
    entry for the dedup log next to the dead letter: both are acknowledged before the commit."""
    bad = chunk("c2", GOOD.replace("Monday", "Tuesday"))

    def write(extractions, sightings):
        if any(x.chunk.id == bad.id for x in extractions):
            raise redis.exceptions.ResponseError("errMsg: the query text ends early")

    output = extract_stage(write).handle([chunk_message(chunk("c1", GOOD), 1), chunk_message(bad, 2)])
    assert [(d.reason, d.offset) for d in output.dead] == [(WRITE_ERROR, 2)]
    ((topic, key, release),) = output.messages
    assert topic == DEDUP and key == f"released/{bad.id}"
    assert isinstance(release, DedupRelease) and (release.chunk_id, release.ingested_ms) == (bad.id, 1)
    assert release.reason == WRITE_ERROR
    # without a dedup topic (tests, `extract text`) nothing is released
    assert extract_stage(write, dedup_topic="").handle([chunk_message(bad, 2)]).messages == ()


class ClockStage:
    """The extract stage's clock as ExtractRunner sees it: `tick` fails with the given errors first."""

    name = "extract"
    openie = ChunkOnly()  # no M2: nothing given up

    def __init__(self, *failures: BaseException):
        self.failures = list(failures)
        self.ticks = 0

    def tick(self) -> bool:
        self.ticks += 1
        if self.failures:
            raise self.failures.pop(0)
        return True

    def on_idle(self) -> bool:
        return self.tick()


def test_review_finding_an_outage_in_the_m2_clock_is_waited_out_not_raised():
    """Review finding: "M2 `tick()`/`flush_all()` run outside the runner's outage handling ... one outage while
    flushing an overdue remainder stops the stage"."""
    clock = ClockStage(redis.exceptions.ConnectionError("graph down"), unavailable())
    broker = Broker()
    runner = ExtractRunner(clock, broker, broker, "dlq")
    assert runner.step(timeout_ms=10) == 0 and clock.ticks == 1
    assert runner.step(timeout_ms=10) == 0 and clock.ticks == 1  # backing off: not tried at once
    time.sleep(0.55)
    runner.step(timeout_ms=10)
    assert clock.ticks == 2  # the second outage: backs off longer
    time.sleep(1.05)
    runner.step(timeout_ms=10)
    assert clock.ticks == 3 and runner._deferred_delay_s == 0.0


def test_a_bug_in_the_m2_clock_stops_the_stage():
    broker = Broker()
    with pytest.raises(KeyError):
        ExtractRunner(ClockStage(KeyError("bug")), broker, broker, "dlq").step(timeout_ms=10)


def test_review_finding_an_outage_in_the_idle_flush_does_not_end_a_batch_run():
    """Review finding: flush_all (the stage's on_idle) ran outside the outage handling: `run --until-idle` exited
    on a graph outage while flushing the last M2 remainders."""
    clock = ClockStage(redis.exceptions.ConnectionError("graph down"))
    clock.tick = lambda: False  # the clock has nothing to do; only the idle flush meets the outage
    flushes = []

    def on_idle() -> bool:
        flushes.append(1)
        if len(flushes) == 1:
            raise redis.exceptions.ConnectionError("graph down")
        return len(flushes) == 2  # the retry flushes; then nothing is left

    clock.on_idle = on_idle
    broker = Broker()
    run_stages([ExtractRunner(clock, broker, broker, "dlq")], until_idle=True, join_timeout_s=5)
    assert len(flushes) == 3


def scheduler(graph, script, **kw):
    from newskg.extract.m2_scheduler import M2Scheduler

    return M2Scheduler(
        graph,
        scripted_client(script, options=LLMOptions(max_retries=0)),
        NAMES.__getitem__,
        k=3,
        max_wait_s=600,
        clock=Clock(),
        **kw,
    )


class RefusingGraph(PairGraph):
    """Refuses the M2 write with the given errors first."""

    def __init__(self, *failures: BaseException):
        super().__init__()
        self.failures = list(failures)

    def write_batch(self, interactions=(), m2_batches=()):
        if self.failures:
            raise self.failures.pop(0)
        super().write_batch(interactions, m2_batches)


def test_review_finding_a_data_error_in_the_m2_write_is_a_failed_try_not_an_escape_from_handle():
    """Review finding: "a non-infrastructure error in `_write` escapes `handle`". It is a failed try of the batch:
    retried, then dead-lettered (m2_batch_failed), never raised."""
    refusal = redis.exceptions.ResponseError("errMsg: invalid input")
    graph = RefusingGraph(refusal, refusal)
    m2 = scheduler(graph, Script(answer(1), answer(1)), max_tries=2, topic="news.chunks")
    graph.add(1, 2, 3)
    m2.after_write([(SUBJ, OBJ)])  # first try: the write refused
    assert m2.given_up() == () and graph.covered == {}
    m2.tick()  # second try (the answer now from the endpoint again: nothing cached here)
    (gave_up,) = m2.given_up()
    assert gave_up.letter.reason == BATCH_FAILED and "ResponseError" in gave_up.letter.detail


def test_an_outage_in_the_m2_write_propagates_and_costs_no_try():
    graph = RefusingGraph(READONLY)
    m2 = scheduler(graph, Script(answer(1), answer(1)), max_tries=1)
    graph.add(1, 2, 3)
    with pytest.raises(redis.exceptions.ReadOnlyError):
        m2.after_write([(SUBJ, OBJ)])
    assert m2.given_up() == () and m2.stats.batches_failed == 0
    m2.after_write([(SUBJ, OBJ)])  # the graph is writable again
    assert graph.covered == {f"{SUBJ}|{OBJ}": [["c01", "c02", "c03"]]}
