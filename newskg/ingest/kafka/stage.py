"""The loop every consumer stage shares: poll a batch, handle it, write downstream and wait for the
acknowledgement, and only then commit the offsets (at-least-once delivery, exactly-once effect through
idempotent writes). Bad input becomes a dead letter; it never stops the loop.

The protocol between a stage and its runner carries no state on the stage: `handle` returns a `StageOutput`
(the writes, the dead letters, and `after_ack`, whatever the stage must do once they are on the broker), and the
runner passes that same output back to `acknowledged` before it commits."""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from newskg.core.errors import NewskgError
from newskg.core.failures import outage
from newskg.core.records import DeadLetter, Record
from newskg.core.timeaxes import iso, utc_now
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.ingestion_order import IngestionOrder
from newskg.ingest.kafka.membership import GroupMembershipError
from newskg.ingest.kafka.producer import RecordProducer, producer_state_lost

log = logging.getLogger(__name__)

EXCERPT_CHARS = 500
DEFAULT_JOIN_TIMEOUT_S = 60.0
# Backoff while a service is out of reach: the first retry, doubling up to the longest wait between two.
RETRY_FIRST_S, RETRY_MAX_S = 0.5, 8.0


class AssignmentTimeout(GroupMembershipError):
    """`--until-idle` got no partitions in time: another member holds them (on noida-db, possibly a dead one)."""

    REASON = "assignment_timeout"


AckT = TypeVar("AckT")


class Outgoing(NamedTuple):
    """One downstream write."""

    topic: str
    key: str | None
    record: Record


@dataclass(frozen=True)
class StageOutput(Generic[AckT]):
    """What `handle` made of a batch. `after_ack` is what `acknowledged` needs once `messages` and `dead` are on
    the broker (and before the offsets are committed): handed back by the runner, never kept on the stage."""

    messages: tuple[Outgoing, ...]
    dead: tuple[DeadLetter, ...]
    after_ack: AckT


def dead_letter(record: ConsumerRecord, stage: str, error: NewskgError) -> DeadLetter:
    """The dead letter for a consumed message: the error's reason code, its message as the detail."""
    value = record.value or b""
    key = record.key.decode("utf-8", "replace") if record.key else None
    return DeadLetter(
        reason=error.reason,
        # the detail may quote the input: a lone surrogate in it could not be sent (UTF-8), and would stop the stage
        detail=str(error)[:2000].encode("utf-8", "replace").decode("utf-8"),
        stage=stage,
        topic=record.topic,
        partition=record.partition,
        offset=record.offset,
        key=key,
        payload_excerpt=value[:EXCERPT_CHARS].decode("utf-8", "replace"),
        payload_bytes=len(value),
        at=iso(utc_now()),
    )


class Stage(ABC, Generic[AckT]):
    name: str

    @abstractmethod
    def handle(self, records: list[ConsumerRecord]) -> StageOutput[AckT]:
        """Turn a batch into downstream writes; per-message failures become dead letters, never exceptions."""

    def acknowledged(self, output: StageOutput[AckT]) -> None:
        """Called with what `handle` returned once its writes are acknowledged, before the commit."""

    def committed(self, output: StageOutput[AckT]) -> None:
        """Called once the batch's offsets are committed: count what the batch did (a batch handled but not
        committed is handled again, and must not be counted twice)."""

    def close(self) -> None:
        """Release what the stage holds."""

    def on_idle(self) -> bool:
        """Called when every stage has caught up: finish deferred work (no offsets involved). True if it did
        something."""
        return False


@dataclass
class StageStats:
    consumed: int = 0
    produced: int = 0
    dead: int = 0
    batches: int = 0


def offset_spans(records: Sequence[ConsumerRecord]) -> str:
    """`topic[partition]@first-last` for each partition of a batch, e.g. `news.articles[1]@8-11`."""
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    for record in records:
        key = (record.topic, record.partition)
        first, last = spans.get(key, (record.offset, record.offset))
        spans[key] = (min(first, record.offset), max(last, record.offset))
    return ", ".join(
        f"{topic}[{partition}]@{first}-{last}" for (topic, partition), (first, last) in sorted(spans.items())
    )


# Whether to hold a batch and try again is the one classifier's call (core/failures.py): the broker out of reach
# or back without the producer's state, the graph, the mirror or the LLM endpoint out of reach or refusing writes
# for now. The name stays for the callers that pass it explicitly.
kafka_outage = outage


@dataclass
class _Held(Generic[AckT]):
    """A batch an outage interrupted: not committed, tried again after `retry_at`. `output` is kept once `handle`
    succeeded, so a retry only re-sends it (handling twice would find its own chunks already kept)."""

    records: list[ConsumerRecord]
    output: StageOutput[AckT] | None
    delay_s: float
    retry_at: float
    since: float


class StageRunner(Generic[AckT]):
    """One stage's poll-handle-write-commit loop. An outage (`outage(exc)`, core/failures.py: the graph, the broker,
    the mirror or the LLM endpoint out of reach) does not stop it: the batch in hand is held, uncommitted, and tried
    again with exponential backoff (RETRY_FIRST_S doubling to RETRY_MAX_S) until the service is back; nothing new
    is polled meanwhile. A broker that came back without the producer's state (`producer_state_lost`) is such an
    outage too: the producer is rebuilt before the batch is sent again (the writes are idempotent upserts by
    content id, so a write that did land is not doubled). Work outside a batch (`deferred`: the stage's clock,
    `on_idle`) is held back by an outage the same way. Any other exception is a bug (per-record failures are the
    stage's dead letters, never exceptions): it propagates and the stage stops loudly."""

    def __init__(
        self,
        stage: Stage[AckT],
        consumer: GroupConsumer,
        producer: RecordProducer,
        dlq_topic: str,
        outage: Callable[[BaseException], bool] = outage,
        order: IngestionOrder | None = None,
    ):
        self.stage = stage
        self.order = order  # hands the stage its records in ingestion order across partitions (None: as polled)
        self.consumer = consumer
        self.producer = producer
        self.dlq_topic = dlq_topic
        self.outage = outage
        self.stats = StageStats()
        self.held: _Held[AckT] | None = None
        self._deferred_delay_s = 0.0  # backoff of deferred work an outage interrupted (0: none pending)
        self._deferred_at = 0.0  # ... and when it may run again

    def step(self, timeout_ms: int = 1000) -> int:
        """One poll-handle-write-commit cycle; returns how many messages it consumed (and committed)."""
        held = self.held
        batch = self._batch(held, timeout_ms)
        if batch is None:
            return 0
        records, output = batch
        generation = self.producer.generation  # which producer these writes go out on, should it lose its state
        try:
            if output is None:
                # Which offsets each batch holds, in order: tests read a replica's batch boundaries from this line.
                log.debug("%s: handling %d records (%s)", self.stage.name, len(records), offset_spans(records))
                output = self.stage.handle(records)
            self._deliver(records, output)
        except Exception as exc:
            if not self.absorbed(exc, generation):
                raise
            self._hold(records, output, exc)
            return 0
        if held is not None:
            log.warning(
                "%s: recovered after %.0f s; the held batch of %d is written and committed",
                self.stage.name,
                time.monotonic() - held.since,
                len(records),
            )
            self.held = None
        return len(records)

    def _batch(
        self, held: _Held[AckT] | None, timeout_ms: int
    ) -> tuple[list[ConsumerRecord], StageOutput[AckT] | None] | None:
        """The held batch once its retry is due, else the next poll's records (no output yet); None when there is
        nothing to handle now: the retry is not due (waited for, up to the poll timeout), the poll found nothing,
        or it failed for an outage (waited RETRY_FIRST_S)."""
        if held is not None:
            wait_s = held.retry_at - time.monotonic()
            if wait_s > 0:
                time.sleep(min(wait_s, timeout_ms / 1000))
                return None
            return held.records, held.output
        try:
            records = self.consumer.poll(timeout_ms=timeout_ms)
            if self.order is not None:
                records = self.order.admit(records)  # the rest waits for what is unread before it
        except Exception as exc:
            if not self.outage(exc):
                raise
            log.warning("%s: poll failed (%s: %s); retrying", self.stage.name, type(exc).__name__, exc)
            time.sleep(RETRY_FIRST_S)
            return None
        return (records, None) if records else None

    def _deliver(self, records: list[ConsumerRecord], output: StageOutput[AckT]) -> None:
        """Send the writes and dead letters, wait for every acknowledgement, then commit."""
        self.write([*output.messages, *(Outgoing(self.dlq_topic, dl.key, dl) for dl in output.dead)])
        self.stage.acknowledged(output)  # nothing is committed unless every write was acknowledged
        if self.consumer.commit(records) is not False:  # False: a rebalance refused it, the batch comes again
            self.stage.committed(output)
        self.stats.consumed += len(records)
        self.stats.produced += len(output.messages)
        self.stats.dead += len(output.dead)
        self.stats.batches += 1

    def write(self, items: Sequence[Outgoing]) -> None:
        """Send, then wait for every acknowledgement; raises the first failure."""
        futures = [self.producer.send(topic, key, rec) for topic, key, rec in items]
        self.producer.flush()
        for future in futures:
            future.get(timeout=30)

    def absorbed(self, exc: BaseException, generation: int) -> bool:
        """Is `exc` an outage to wait out (rather than raise)? If the broker lost the state of the producer the
        writes went out on (its `generation`), the producer is rebuilt for the retry."""
        if not self.outage(exc):
            return False
        if producer_state_lost(exc):
            self._rebuild_producer(generation)
        return True

    def _rebuild_producer(self, generation: int) -> None:
        """A fresh producer id for the retry. Should the broker be gone again meanwhile, the old producer stays and
        the next retry, failing the same way, rebuilds it then."""
        try:
            self.producer.rebuild(generation)
        except Exception as exc:
            if not self.outage(exc):  # kafka-python 3 reports a failed bootstrap as a connection error or timeout
                raise
            log.warning("%s: could not rebuild the producer yet (%s: %s)", self.stage.name, type(exc).__name__, exc)

    def _hold(self, records: list[ConsumerRecord], output: StageOutput[AckT] | None, exc: BaseException) -> None:
        now = time.monotonic()
        previous = self.held
        delay = RETRY_FIRST_S if previous is None else min(previous.delay_s * 2, RETRY_MAX_S)
        self.held = _Held(records, output, delay, now + delay, previous.since if previous else now)
        log.warning(
            "%s: outage (%s: %s); %d messages held, nothing committed, retrying in %.1f s",
            self.stage.name,
            type(exc).__name__,
            str(exc)[:300],
            len(records),
            delay,
        )

    def deferred(self, work: Callable[[], bool]) -> bool:
        """Run work that belongs to no batch (the stage's clock, `on_idle`) under the same outage handling: an
        outage postpones it with backoff (RETRY_FIRST_S doubling to RETRY_MAX_S) and answers True (not done: not
        idle); anything else propagates. Returns what `work` returned (True: it did something)."""
        now = time.monotonic()
        if now < self._deferred_at:
            return True
        try:
            did = work()
        except Exception as exc:
            if not self.outage(exc):
                raise
            delay = RETRY_FIRST_S if not self._deferred_delay_s else min(self._deferred_delay_s * 2, RETRY_MAX_S)
            self._deferred_delay_s, self._deferred_at = delay, now + delay
            log.warning(
                "%s: outage during deferred work (%s: %s); trying again in %.1f s",
                self.stage.name,
                type(exc).__name__,
                str(exc)[:300],
                delay,
            )
            return True
        if self._deferred_delay_s:
            log.warning("%s: deferred work done after the outage", self.stage.name)
        self._deferred_delay_s, self._deferred_at = 0.0, 0.0
        return did

    def on_idle(self) -> bool:
        """The stage's `on_idle` (every stage caught up), under the outage handling of `deferred`."""
        return self.deferred(self.stage.on_idle)

    def idle(self) -> bool:
        """Holds partitions, no batch held back by an outage, and has read and handled everything on them."""
        if self.held is not None or (self.order is not None and self.order.buffered):
            return False
        try:
            return bool(self.consumer.assignment()) and self.consumer.lag() == 0
        except Exception as exc:
            if not self.outage(exc):
                raise
            return False


IDLE_POLL_MS = 500  # a runner's poll when the last round moved nothing
FLOWING_POLL_MS = 20  # ... and when it moved records: the others are stepped again soon anyway


def run_stages(
    runners: Sequence[StageRunner[Any]],
    until_idle: bool,
    stop: threading.Event | None = None,
    join_timeout_s: float = DEFAULT_JOIN_TIMEOUT_S,
    on_progress: Callable[[Sequence[StageRunner[Any]]], None] | None = None,
) -> None:
    """Step every runner in turn in this thread. With until_idle, return once every runner has been idle for two
    rounds in a row (so a message one stage produced for the next is seen); otherwise run until `stop` is set.

    A runner that holds no partitions after join_timeout_s: with until_idle that raises AssignmentTimeout (the
    batch job cannot finish); a long-running stage logs it once and keeps waiting (more replicas than
    partitions is legitimate).

    The runners' stages differ in what they hand to `acknowledged` (hence `StageRunner[Any]`); this loop never
    looks at it."""
    stop = stop or threading.Event()
    assignments = _AssignmentWait(join_timeout_s, until_idle)
    quiet_rounds, moved = 0, 0
    while not stop.is_set():
        # While records flow, a runner with nothing to read must not hold up the next one for a whole idle wait
        # (`run all`: the process stage's empty poll delayed every extract batch by it).
        timeout_ms = FLOWING_POLL_MS if moved else IDLE_POLL_MS
        moved = sum(runner.step(timeout_ms=timeout_ms) for runner in runners)
        if on_progress and moved:
            on_progress(runners)
        if moved:
            quiet_rounds = 0
            continue
        waiting = assignments.waiting(runners)
        if not until_idle or waiting:
            continue
        quiet_rounds = quiet_rounds + 1 if all(r.idle() for r in runners) else 0
        if quiet_rounds >= 2:
            if any([r.on_idle() for r in runners]):
                quiet_rounds = 0
                continue
            return


class _AssignmentWait:
    """How long runners have held no partitions (from the start, or since a rebalance took them away): past
    `join_timeout_s`, AssignmentTimeout is raised (until_idle) or logged once until they hold some again."""

    def __init__(self, join_timeout_s: float, until_idle: bool):
        self.join_timeout_s = join_timeout_s
        self.until_idle = until_idle
        self.since: float | None = time.monotonic()
        self.warned = False

    def waiting(self, runners: Sequence[StageRunner[Any]]) -> list[StageRunner[Any]]:
        """The runners that hold no partitions now."""
        waiting = [r for r in runners if not r.consumer.assignment()]
        if not waiting:
            self.since, self.warned = None, False
        elif self.since is None:
            self.since = time.monotonic()  # e.g. a rebalance took the partitions away
        elif time.monotonic() - self.since > self.join_timeout_s:
            if self.until_idle:
                raise _assignment_timeout(waiting, self.join_timeout_s)
            if not self.warned:
                log.warning("%s", _assignment_timeout(waiting, self.join_timeout_s))
                self.warned = True
        return waiting


def _assignment_timeout(waiting: list[StageRunner[Any]], waited_s: float) -> AssignmentTimeout:
    who = "; ".join(r.consumer.describe() for r in waiting)
    return AssignmentTimeout(
        f"gave up after {waited_s:.0f} s waiting for a partition assignment: {who}. Another member holds the "
        "partitions; on noida-db a member that died is never expired: restart it with its NEWSKG_INSTANCE_ID, or "
        "remove it with `newskg run forget INSTANCE` (NEWSKG_KAFKA_JOIN_TIMEOUT_S sets this wait)"
    )
