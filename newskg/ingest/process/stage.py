"""The process stage (consumer group `newskg-process`): raw articles → chunks and sightings, or dead letters."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from newskg.core.errors import NewskgError
from newskg.core.failures import must_stop
from newskg.core.records import Article, ChunkSighting, DeadLetter, DedupSighting
from newskg.core.settings import Settings
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.ingestion_order import merged
from newskg.ingest.kafka.stage import Outgoing, Stage, StageOutput, dead_letter
from newskg.ingest.process.chunk_dedup import chunk_and_dedup
from newskg.ingest.process.dedup import Decision, DedupIndex
from newskg.ingest.process.order import ArticleOrder
from newskg.ingest.process.sentences import split_each
from newskg.ingest.process.signature_log import Kept, SignatureLog

log = logging.getLogger(__name__)

PROCESSING_ERROR = "processing_error"


@dataclass(frozen=True)
class DedupLogEntries:
    """What a batch adds to the shared dedup log, written only once the batch's chunks and sightings are
    acknowledged (a crash before that re-emits them; logged first, a crash would lose them for good)."""

    kept: tuple[Kept, ...] = ()
    sighted: tuple[DedupSighting, ...] = ()


@dataclass
class _Batch:
    """The output of one `handle` call while it is built; frozen into a StageOutput at the end."""

    messages: list[Outgoing] = field(default_factory=list[Outgoing])
    dead: list[DeadLetter] = field(default_factory=list[DeadLetter])
    kept: list[Kept] = field(default_factory=list[Kept])
    sighted: list[DedupSighting] = field(default_factory=list[DedupSighting])

    def add(self, other: _Batch) -> None:
        self.messages += other.messages
        self.dead += other.dead
        self.kept += other.kept
        self.sighted += other.sighted

    def output(self) -> StageOutput[DedupLogEntries]:
        entries = DedupLogEntries(tuple(self.kept), tuple(self.sighted))
        return StageOutput(tuple(self.messages), tuple(self.dead), entries)


class ProcessStage(Stage[DedupLogEntries]):
    name = "process"

    def __init__(self, settings: Settings, index: DedupIndex, signature_log: SignatureLog | None):
        self.settings = settings
        self.index = index
        self.signature_log = signature_log
        # The order its articles are decided in (ingest/process/order.py); the runner's gate hands them on by it.
        self.order = ArticleOrder(settings.max_page_bytes)
        if signature_log:
            # Before the stage exists (and so before its consumer joins the group): ready only after replay.
            signature_log.replay(index)

    @property
    def ready(self) -> bool:
        """The dedup state is loaded: decisions made now agree with every other replica's."""
        return self.signature_log is None or self.signature_log.replayed

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[DedupLogEntries]:
        """Every step of a record (decode, guards, main text, sentences, chunks, dedup) runs in its guard: a record
        that fails any of them is one dead letter with a reason code and the others go on; only an outage or a
        stop (core/failures.py) propagates, for the runner to hold the batch or end the stage."""
        if self.signature_log:
            self.signature_log.catch_up(self.index)  # what other replicas kept since the last batch
        batch = _Batch()
        articles: list[tuple[ConsumerRecord, Article]] = []
        for record in merged(records, self.order.key):
            try:
                articles.append((record, self.order.article(record)))
            except Exception as exc:
                self._dead(record, exc, batch)
        sentence_lists = split_each([article.text for _, article in articles]) if articles else []
        for (record, article), sentences in zip(articles, sentence_lists, strict=True):
            try:
                if isinstance(sentences, Exception):
                    raise sentences
                batch.add(self._chunk(article, sentences))
            except Exception as exc:
                self._dead(record, exc, batch)
        return batch.output()

    def _dead(self, record: ConsumerRecord, exc: Exception, batch: _Batch) -> None:
        """The record's dead letter: its own reason for a refusal of ours, `processing_error` for anything else."""
        if must_stop(exc):
            raise exc
        if not isinstance(exc, NewskgError):
            log.exception("process failed on %s[%d]@%d", record.topic, record.partition, record.offset, exc_info=exc)
            exc = NewskgError(f"{type(exc).__name__}: {exc}", reason=PROCESSING_ERROR)
        batch.dead.append(dead_letter(record, self.name, exc))

    def _chunk(self, article: Article, sentences: list[str]) -> _Batch:
        """The article's chunk and sighting messages, and what the dedup log gains once they are acknowledged."""
        topic = self.settings.topic_chunks
        batch = _Batch()
        for step in chunk_and_dedup(article, sentences, self.settings, self.index):
            decision, record = step.decision, step.record
            # Keyed by article: an article's chunks stay in order on one partition, so the extract stage sees a
            # full name before the short forms of later chunks.
            if decision.kind == "duplicate":
                batch.messages.append(
                    Outgoing(topic, article.id, _sighting(article, decision.chunk_id, decision.similarity))
                )
                if step.held:  # the sighting, in the log once the batch is acknowledged
                    batch.sighted.append(_dedup_sighting(article, record.id, decision))
            elif decision.kind == "new":
                # Not held (published before the window): not logged either; a re-ingest re-emits the same
                # content-keyed chunk, which the graph's upsert absorbs.
                if step.held:
                    day = article.published_day
                    batch.kept.append(Kept(record.id, article.id, step.signature, day, article.ingested_ms))
                batch.messages.append(Outgoing(topic, article.id, record))
            elif decision.kind == "resend":  # this record again (dedup.Decision): what it emitted, not logged again
                message = (
                    _sighting(article, decision.sighting_of, decision.similarity) if decision.sighting_of else record
                )
                batch.messages.append(Outgoing(topic, article.id, message))
        return batch

    def acknowledged(self, output: StageOutput[DedupLogEntries]) -> None:
        if self.signature_log:
            self.signature_log.append(self.index, output.after_ack.kept, output.after_ack.sighted)


def _sighting(article: Article, kept_chunk_id: str, similarity: float) -> ChunkSighting:
    return ChunkSighting(
        chunk_id=kept_chunk_id,
        article_id=article.id,
        **ChunkSighting.provenance_of(article, day=article.published_day),
        similarity=similarity,
    )


def _dedup_sighting(article: Article, cid: str, decision: Decision) -> DedupSighting:
    """The dedup log's entry of a sighting the index noted (ingest/process/signature_log.py)."""
    a, day, ms = article.id, article.published_day, article.ingested_ms
    kept, sim = decision.chunk_id, decision.similarity
    return DedupSighting(chunk_id=cid, article_id=a, kept_chunk_id=kept, day=day, ingested_ms=ms, similarity=sim)
