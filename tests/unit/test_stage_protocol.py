"""The stage protocol: what `handle` returns is what `acknowledged` is given, once the batch's writes are
acknowledged and before the offsets are committed; nothing is handed over through the stage in between. Stand-in
consumer and producer (the real broker paths are in tests/integration/test_ingest_pipeline.py)."""

from types import SimpleNamespace

import pytest

from newskg.core.records import DeadLetter, DedupSighting, RawArticle
from newskg.core.settings import Settings
from newskg.extract.failures import outage as extract_outage
from newskg.extract.stage import ExtractRunner
from newskg.ingest.kafka.client import ConsumerRecord, OutOfOrderSequenceNumberError
from newskg.ingest.kafka.stage import Outgoing, Stage, StageOutput, StageRunner, kafka_outage
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.signature_log import Kept
from newskg.ingest.process.stage import DedupLogEntries, ProcessStage

ARTICLES = "news.articles"


def message(record: RawArticle, offset: int) -> ConsumerRecord:
    value = record.to_bytes()
    return ConsumerRecord(ARTICLES, 0, None, offset, 0, 0, None, value, [], None, -1, len(value), -1)


def article(n: int, text: str) -> RawArticle:
    return RawArticle(text=text, source="wire", fetched_at="2024-03-01T08:00:00Z", published=f"2024-03-0{n}")


class Future:
    def __init__(self, events: list, fails: bool):
        self.events, self.fails = events, fails

    def get(self, timeout: float | None = None) -> None:
        if self.fails:
            raise TimeoutError("the broker never acknowledged")
        self.events.append("acked")


class StandIns:
    """A consumer with one batch to hand out and a producer whose acknowledgements may fail, logging in order."""

    generation = 0  # the RecordProducer's: never rebuilt here

    def __init__(self, records: list[ConsumerRecord], writes_fail: bool = False):
        self.events: list = []
        self.records, self.writes_fail = records, writes_fail

    def poll(self, timeout_ms: int = 1000) -> list[ConsumerRecord]:
        records, self.records = self.records, []
        return records

    def commit(self, records: list[ConsumerRecord]) -> bool:
        self.events.append(("commit", [r.offset for r in records]))
        return True

    def send(self, topic: str, key: str | None, value: object) -> Future:
        self.events.append(("send", topic))
        return Future(self.events, self.writes_fail)

    def flush(self) -> None:
        self.events.append("flush")


class TokenStage(Stage[str]):
    """Writes one message per batch and hands `acknowledged` a token naming the batch."""

    name = "token"

    def __init__(self, events: list):
        self.events = events

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[str]:
        first = records[0].offset
        return StageOutput((Outgoing("out", None, article(1, "x" * 50)),), (), f"batch@{first}")

    def acknowledged(self, output: StageOutput[str]) -> None:
        self.events.append(("acknowledged", output.after_ack))


def test_acknowledged_gets_what_handle_returned_after_the_write_and_before_the_commit():
    io = StandIns([message(article(1, "x" * 50), 7), message(article(2, "y" * 50), 8)])
    runner = StageRunner(TokenStage(io.events), io, io, "dlq")
    assert runner.step() == 2
    assert io.events == [("send", "out"), "flush", "acked", ("acknowledged", "batch@7"), ("commit", [7, 8])]


class CountingStage(TokenStage):
    handled = 0

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[str]:
        self.handled += 1
        return super().handle(records)


class BrokenStage(TokenStage):
    def handle(self, records: list[ConsumerRecord]) -> StageOutput[str]:
        raise ValueError("a bug, not an outage")


def test_a_write_never_acknowledged_is_neither_acknowledged_to_the_stage_nor_committed_but_held_and_resent(
    monkeypatch,
):
    monkeypatch.setattr("newskg.ingest.kafka.stage.RETRY_FIRST_S", 0.0)
    io = StandIns([message(article(1, "x" * 50), 7)], writes_fail=True)
    stage = CountingStage(io.events)
    runner = StageRunner(stage, io, io, "dlq")
    assert runner.step() == 0  # the broker is out: held, not raised, not committed
    assert io.events == [("send", "out"), "flush"]
    assert runner.held is not None and not runner.idle()

    io.writes_fail = False  # the broker is back: the same output is sent again (handled once), then committed
    io.events.clear()
    assert runner.step() == 1
    assert stage.handled == 1 and runner.held is None
    assert io.events == [("send", "out"), "flush", "acked", ("acknowledged", "batch@7"), ("commit", [7])]


class GraphDownOnceStage(CountingStage):
    """The graph write inside `handle` fails once (the server down), then succeeds."""

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[str]:
        if self.handled == 0:
            self.handled += 1
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return super().handle(records)


def test_an_outage_inside_handle_holds_the_batch_and_handles_it_again_without_polling(monkeypatch):
    monkeypatch.setattr("newskg.ingest.kafka.stage.RETRY_FIRST_S", 0.0)
    io = StandIns([message(article(1, "x" * 50), 7)])
    stage = GraphDownOnceStage(io.events)
    runner = StageRunner(stage, io, io, "dlq")
    assert runner.step() == 0 and io.events == []  # nothing sent, nothing committed
    io.records = [message(article(2, "y" * 50), 8)]  # a later message waits: the held batch goes first
    assert runner.step() == 1
    assert stage.handled == 2 and io.events[-1] == ("commit", [7])
    assert runner.step() == 1 and io.events[-1] == ("commit", [8])


def test_an_error_that_is_not_an_outage_still_stops_the_step():
    io = StandIns([message(article(1, "x" * 50), 7)])
    with pytest.raises(ValueError):
        StageRunner(BrokenStage(io.events), io, io, "dlq").step()
    assert io.events == []


class LogStandIn:
    """The dedup log's calls, with nothing to replay; records what is appended."""

    replayed = True

    def __init__(self):
        self.appended: list[tuple[list[str], list[DedupSighting]]] = []

    def replay(self, index: DedupIndex) -> None:
        pass

    def catch_up(self, index: DedupIndex) -> None:
        pass

    def append(self, index: DedupIndex, kept: tuple[Kept, ...], sighted: tuple[DedupSighting, ...]) -> None:
        self.appended.append(([k.chunk_id for k in kept], list(sighted)))

    def close(self) -> None:
        pass


FIRST = "The harbour council approved a new ferry line on Monday. Boats will run every hour from May."
SECOND = "A storm closed the mountain pass for three days. Crews cleared the road by Thursday evening."


def test_the_dedup_log_gets_the_acknowledged_batch_s_entries_even_when_another_batch_was_handled_since():
    """Two batches handled before the first is acknowledged (as a retry after a failed write would): the log gets
    the first batch's kept chunks, not whatever the stage handled last."""
    settings = Settings(_env_file=None)
    dedup_log = LogStandIn()
    stage = ProcessStage(settings, DedupIndex(0.7, settings.dedup_num_perm), dedup_log)
    first = stage.handle([message(article(1, FIRST), 0)])
    second = stage.handle([message(article(2, SECOND), 1)])
    first_chunks = [m.record.id for m in first.messages]
    assert first_chunks and isinstance(first.after_ack, DedupLogEntries)
    assert [k.chunk_id for k in first.after_ack.kept] == first_chunks
    stage.acknowledged(first)
    assert dedup_log.appended == [(first_chunks, [])]
    stage.acknowledged(second)
    assert dedup_log.appended[1][0] == [m.record.id for m in second.messages] != first_chunks


class StateLosingProducer(StandIns):
    """A broker restarted without this producer's state (noida-db after kill -9): every write fails with kafka-python's
    OutOfOrderSequenceNumberError until the producer is rebuilt with a fresh producer id."""

    def __init__(self, records: list[ConsumerRecord]):
        super().__init__(records)
        self.rebuilt_from: list[int] = []

    def send(self, topic: str, key: str | None, value: object) -> Future:
        self.events.append(("send", topic))
        return LostStateFuture(self.events) if not self.rebuilt_from else Future(self.events, fails=False)

    def rebuild(self, seen: int) -> bool:
        self.rebuilt_from.append(seen)
        self.generation += 1
        return True


class LostStateFuture(Future):
    def __init__(self, events: list):
        super().__init__(events, fails=True)

    def get(self, timeout: float | None = None) -> None:
        raise OutOfOrderSequenceNumberError("the broker received an out of order sequence number")


@pytest.mark.parametrize("outage", [kafka_outage, extract_outage], ids=["kafka_outage", "extract_outage"])
def test_a_broker_that_lost_the_producer_state_gets_the_batch_again_from_a_rebuilt_producer(monkeypatch, outage):
    monkeypatch.setattr("newskg.ingest.kafka.stage.RETRY_FIRST_S", 0.0)
    io = StateLosingProducer([message(article(1, "x" * 50), 7)])
    stage = CountingStage(io.events)
    runner = StageRunner(stage, io, io, "dlq", outage)
    assert runner.step() == 0  # held like an outage, not raised: the pipeline goes on
    assert io.events == [("send", "out"), "flush"] and runner.held is not None  # nothing acknowledged or committed
    assert io.rebuilt_from == [0]  # the producer the writes went out on was replaced

    io.events.clear()
    assert runner.step() == 1  # the same output, sent again on the new producer, then committed
    assert stage.handled == 1 and runner.held is None and io.rebuilt_from == [0]
    assert io.events == [("send", "out"), "flush", "acked", ("acknowledged", "batch@7"), ("commit", [7])]


class M2StandIn:
    """M2's give-up hand-over (extract/variants/m2.py): one batch given up, kept until its letter is acknowledged."""

    def __init__(self):
        letter = DeadLetter(
            reason="m2_batch_failed",
            detail="3 tries",
            stage="extract",
            topic="news.chunks",
            partition=0,
            offset=4,
            at="t",
        )
        self.pending = [SimpleNamespace(letter=letter)]
        self.noted: list = []

    def given_up(self) -> tuple:
        return tuple(self.pending)

    def dead_lettered(self, sent) -> None:
        self.noted += list(sent)
        self.pending = [g for g in self.pending if g not in sent]


def test_m2_give_ups_whose_dead_letters_met_a_broker_without_the_producer_state_are_sent_again_not_raised():
    io = StateLosingProducer([])
    m2 = M2StandIn()
    stage = SimpleNamespace(name="extract", openie=m2, tick=lambda: False)
    runner = ExtractRunner(stage, io, io, "dlq", extract_outage)
    assert runner.step() == 0  # the letter's write failed: not raised, the give-up kept, the producer rebuilt
    assert m2.noted == [] and len(m2.pending) == 1 and io.rebuilt_from == [0]
    assert runner.step() == 0
    assert len(m2.noted) == 1 and m2.pending == [] and runner.stats.dead == 1
