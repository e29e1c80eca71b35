"""The extract stage (consumer group `newskg-extract`): chunks → linked entities → interactions (M0, M1 or
M2) → the graph store, in one idempotent write per consumer batch, committed only after that write.

Each chunk is extracted inside its own guard: a chunk whose linking, open-IE or validation raises becomes a dead
letter (`extraction_error`, with the exception) and the others of the batch go on. Only infrastructure failures
(extract/failures.py) stop the step, uncommitted, to be retried. The variant's interactions come from its own
module behind one protocol (extract/variants/), called at fixed points: a chunk linked, the batch linked, the batch
written, the clock, the stream idle; M2's batches are scheduled by extract/m2_scheduler.py.

The alias index learns from a chunk only once the chunk is in the graph. A batch is one transaction over the
linker (extract/entities/linker.py `mark`/`rollback`/`commit`): its chunks are linked in order, each seeing what
the earlier ones taught; a chunk that fails while linking is rolled back at once; once the batch is written, the
index keeps the operations of exactly the chunks written (if any chunk of the batch was not written — dead-lettered
after linking, or the write stopped by an outage — the batch's operations are rolled back and those of the
written chunks replayed from their journals, in link order). So the index is always the journals of the chunks
the graph holds, replayed in order: what a restart rebuilds.

Replicas share the index through the linking log (extract/entities/link_log.py): before each batch, and outside its
transaction, a stage applies the journals other replicas wrote since its last batch; the journals of the chunks a
batch wrote go on the log with the batch's other outputs, before its offsets are committed.

A chunk already written whole for its article (a linking journal of the chunk and article is in the graph) is
never extracted again, whatever the record (a redelivery, a re-emission by a restarted process stage, the same
page ingested again with another ingestion instant or as a backfill): the record is a sighting (similarity 1),
nothing else. The same text in another article is that article's own record, extracted as of its own times (as
when the two arrive in one batch): which of two articles' records comes first depends on how partitions
interleave, so letting the first exclude the other would make the graph depend on it (bench/determinism.py)."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from newskg.core.errors import NewskgError
from newskg.core.llm.client import LLMClient, Outcomes
from newskg.core.records import Chunk, ChunkSighting, DeadLetter, LinkingEntry, RecordError, decode_any
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.journal import LinkJournal, journal_id
from newskg.extract.entities.link_log import SharedLinking
from newskg.extract.entities.link_log import entry as link_entry
from newskg.extract.failures import EXTRACTION_ERROR, describe, must_stop
from newskg.extract.m2_scheduler import GiveUp
from newskg.extract.openie.targets import GraphMentionStats
from newskg.extract.options import ExtractOptions
from newskg.extract.result import ChunkExtraction
from newskg.extract.variants import OpenIE, open_ie
from newskg.extract.variants.base import Pending, as_of_key
from newskg.graph.mirror.qdrant import VectorMirror
from newskg.graph.mirror.sync import mirror_from_graph
from newskg.graph.store import journals
from newskg.graph.store import mentions as mention_counts
from newskg.graph.store.journals import JournalRow
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.ingestion_order import ingestion_key, merged
from newskg.ingest.kafka.stage import Outgoing, Stage, StageOutput, StageRunner, dead_letter
from newskg.ingest.process.log_keys import release_entry

log = logging.getLogger(__name__)

WRITE_ERROR = "graph_write_error"
# What a batch write could not write: the chunk (or the sighting, with its message), the exception, the reason.
WriteFailure = tuple[Chunk | tuple[ChunkSighting, ConsumerRecord], BaseException, str]
# One message's share of a batch written message by message: what failure names it, its extractions, sightings.
_WriteUnit = tuple[Chunk | tuple[ChunkSighting, ConsumerRecord], list[ChunkExtraction], list[ChunkSighting]]


class Unwritable(NewskgError):
    """A chunk holding a string the graph refuses (a NUL cuts a FalkorDB query; a lone surrogate has no UTF-8
    form), found before it is linked: linking it would teach the alias index names no write can carry, and every
    later chunk linked to such a name would be refused too (issue #28: good articles dead-lettered after one bad
    chunk). Its dead letter is `graph_write_error`, as if the write had refused it."""

    REASON = WRITE_ERROR


def refuse_unwritable(chunk: Chunk) -> None:
    for name, value in chunk.model_dump().items():
        # model_dump's values are untyped: a list field's items are checked one by one like any other value
        for text in cast(list[object], value) if isinstance(value, list) else [value]:
            if not isinstance(text, str):
                continue
            if "\x00" in text:
                raise Unwritable(f"field {name} holds a NUL, which the graph refuses")
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise Unwritable(f"field {name} holds a lone surrogate, which the graph refuses: {exc}") from exc


def sighting_of(chunk: Chunk) -> ChunkSighting:
    """A record of a chunk written whole already for its article, as what it adds: its article's sighting of the
    chunk, at similarity 1 (the same text)."""
    reported: dict[str, object] = {
        name: getattr(chunk, name) for name in ChunkSighting.model_fields if hasattr(chunk, name)
    }
    # Validated from a dict (as the keyword call did): the fields are copied by name, so no typed __init__ call.
    return ChunkSighting.model_validate(
        {**reported, "chunk_id": chunk.id, "article_id": chunk.article_id, "similarity": 1.0}
    )


@dataclass(frozen=True)
class ExtractAck:
    """What a handled batch leaves for after its writes: the M2 batches given up whose dead letters are in its
    output (noted as given up in the graph only once those letters are on the broker), and the LLM outcomes its
    answers had (`extract stats`: counted once the batch is committed, so a redelivered batch counts once)."""

    given_up: tuple[GiveUp, ...] = ()
    outcomes: Outcomes | None = None


class ExtractStage(Stage[ExtractAck]):
    """`handle` returns, for `acknowledged` and `committed`, an ExtractAck."""

    name = "extract"

    def __init__(
        self,
        store: GraphStore,
        extractor: ChunkExtractor,
        options: ExtractOptions,
        llm: LLMClient | None = None,
        mirror: VectorMirror | None = None,
        link_log: SharedLinking | None = None,
    ):
        self.store = store
        self.extractor = extractor
        self.options = options
        self.llm = llm
        self.mirror = mirror
        self.link_log = link_log  # the alias index shared with the other replicas (None: this stage's alone)
        self.mention_stats = GraphMentionStats(store.conn)  # the graph's daily counts: replicas agree
        # journal id → (order, extraction) of the chunks linked but not written yet
        self._linked: dict[str, tuple[int, ChunkExtraction]] = {}
        # The open transaction over the linker (one per batch): the journal ids whose operations it applied, in
        # order, with their journals; and those written to the graph (kept at its end).
        self._applied: dict[str, LinkJournal | None] = {}
        self._wrote: set[str] = set()
        self._order = 0
        # the variant's interactions (extract/variants/); ValueError for M1 or M2 without an LLM
        self.openie: OpenIE = open_ie(
            options, extractor=extractor, targets=self, store=store, llm=llm, mirror=mirror, stage=self.name
        )

    def handle(self, records: list[ConsumerRecord]) -> StageOutput[ExtractAck]:
        if self.llm is None:
            return self._handle(records, None)
        with self.llm.deferring() as outcomes:
            return self._handle(records, outcomes)

    def _handle(self, records: list[ConsumerRecord], outcomes: Outcomes | None) -> StageOutput[ExtractAck]:
        dead: list[DeadLetter] = []
        chunks: list[Chunk] = []
        sightings: list[tuple[ChunkSighting, ConsumerRecord]] = []
        origin: dict[str, list[ConsumerRecord]] = {}  # journal id of a chunk record -> the messages that carried it
        extracted: dict[tuple[str, str], Chunk] = {}  # (chunk id, article id) -> the record of it extracted
        # Linked in as-of order: a chunk can only learn from chunks ingested before it (alias_index.visible), so
        # the batch's partitions are merged by their records' (ingestion instant, partition, offset), each kept in
        # offset order: behind the runner's ingestion-order gate, the batches in turn give one sequence whatever
        # the fetch timing and wherever the batches end, even where a partition is not in ingestion order (a
        # backfill), where a sort of each batch did not (ingest/kafka/ingestion_order.py).
        for record in merged(records, ingestion_key):
            try:
                item = decode_any(record.value or b"")
            except RecordError as exc:
                dead.append(dead_letter(record, self.name, exc))
                continue
            if isinstance(item, Chunk):
                first = extracted.setdefault((item.id, item.article_id), item)
                if first is item:
                    chunks.append(item)
                # a copy of an article's chunk in the same batch (redelivered, re-emitted, the page ingested again)
                # is extracted once: written or dead-lettered with it
                origin.setdefault(journal_id(first), []).append(record)
            elif isinstance(item, ChunkSighting):
                sightings.append((item, record))  # a near-duplicate: recorded against the kept chunk, not extracted
            else:
                misplaced = NewskgError(f"{item.KIND} on the chunks topic", reason="wrong_kind")
                dead.append(dead_letter(record, self.name, misplaced))
        if self.link_log:
            self.link_log.catch_up(self.extractor.linker)  # what the other replicas wrote since the last batch
        self.extractor.linker.mark()  # the batch's transaction over the linker (see the module docstring)
        try:
            chunks, whole, whole_journals = self._split_written(chunks)
            # A chunk written whole already: its records are sightings of it, nothing is extracted again.
            sightings += [(sighting_of(c), r) for c in whole for r in origin.pop(journal_id(c))]
            extractions, failures = self.extract_each(chunks)
            written, write_failures = self._persist(extractions, sightings)
        finally:
            self._settle()  # the index keeps the operations of the chunks written, and only those
        outgoing: list[Outgoing] = []  # dedup releases and linking log entries
        for chunk, exc, reason in [*failures, *write_failures]:
            messages = origin[journal_id(chunk)] if isinstance(chunk, Chunk) else [chunk[1]]
            log.warning("dead-lettered %d message(s) (%s): %s", len(messages), reason, describe(exc))
            dead += [dead_letter(r, self.name, NewskgError(describe(exc), reason=reason)) for r in messages]
            if isinstance(chunk, Chunk) and self.options.dedup_topic:
                # not in the graph: its signature in the dedup log is let go with the dead letter (same write)
                outgoing.append(Outgoing(self.options.dedup_topic, *release_entry(chunk, reason)))
        outgoing += self._log_entries(written, whole_journals)
        touched = [(x.chunk, {m.entity_id for m in x.mentions}) for x in written] + self._remirror(whole)
        given_up = self.openie.after_write(touched) if touched else ()
        letters = tuple(dead) + tuple(g.letter for g in given_up)
        return StageOutput(tuple(outgoing), letters, ExtractAck(given_up, outcomes))

    def _split_written(self, chunks: list[Chunk]) -> tuple[list[Chunk], list[Chunk], list[str]]:
        """(to extract, written whole already, the ids of the journals that wrote those): a chunk with a linking
        journal of a record of its article in the graph was written whole, before a restart or by an earlier
        record (a redelivery, a re-emission, the same page ingested again). Linking it again would teach the index
        twice what the journal taught it, and, with the record's later ingestion instant, against a larger index:
        other mentions, other facts. (A journal written before journals noted their article stands for any
        article.)

        A chunk this process linked whose batch write raised (an outage) after the graph had taken it: its
        journal is in the graph but its operations were rolled back with the batch; they are replayed now."""
        done = journals.written_chunks(self.store.conn, (c.id for c in chunks))
        fresh: list[Chunk] = []
        whole: list[Chunk] = []
        writers: list[str] = []
        for chunk in chunks:
            theirs = [key for key, article in done.get(chunk.id, {}).items() if article in (chunk.article_id, None)]
            (whole if theirs else fresh).append(chunk)
            writers += theirs
        for chunk in sorted(whole, key=lambda c: self._linked.get(journal_id(c), (0,))[0]):
            key = journal_id(chunk)
            linker = self.extractor.linker
            if key in self._linked and key in done[chunk.id] and key not in self._applied and key not in linker.held:
                journal = self._linked[key][1].journal
                if journal is not None:
                    linker.replay(journal)
                self._applied[key] = journal
                self._wrote.add(key)
            self._forget(chunk)
        return fresh, whole, writers

    def _log_entries(self, written: list[ChunkExtraction], whole_journals: list[str]) -> list[Outgoing]:
        """The linking log's entries of the batch (extract/entities/link_log.py): the journals of the chunks it
        wrote, and again those of the chunks it found written whole (the stage that wrote them may have died
        before their entries were on the broker; compaction keeps one of each)."""
        if self.link_log is None:
            return []
        entries = [link_entry(x.chunk, x.journal) for x in written if x.journal is not None]
        for key, chunk_id, text in journals.bodies(self.store.conn, whole_journals):
            if text != journals.NO_JOURNAL:
                journal = LinkJournal.model_validate_json(text)
                entries.append((key, LinkingEntry(journal_id=key, chunk_id=chunk_id, journal=journal)))
        return [Outgoing(self.link_log.topic, key, item) for key, item in entries]

    def _settle(self) -> None:
        """End the batch's transaction over the linker: keep the operations of the chunks written (in the order
        they were applied), undo the others' (dead-lettered after linking, or not written because the write
        stopped: a retry replays or links them again)."""
        linker = self.extractor.linker
        applied = list(self._applied.items())
        kept = [(key, journal) for key, journal in applied if key in self._wrote]
        if len(kept) != len(applied):
            linker.rollback()
            for _, journal in kept:
                if journal is not None:
                    linker.replay(journal)
        linker.commit()
        linker.held.update(key for key, _ in kept)
        self._applied, self._wrote = {}, set()

    def _remirror(self, chunks: list[Chunk]) -> list[tuple[Chunk, set[str]]]:
        """The mirror of chunks written whole before a restart (the stage may have died between the graph and
        the mirror write), from the graph; returns each with its mentioned entities, for M2."""
        if not chunks:
            return []
        parts = {p.id: p for p in journals.chunk_parts(self.store.conn, (c.id for c in chunks))}
        if self.mirror:
            interactions = (i for p in parts.values() for i in p.interaction_ids)
            mirror_from_graph(self.store, self.mirror, interactions, list(parts))
        log.info("%d chunk(s) were written before a restart: re-mirrored, not linked again", len(chunks))
        return [(c, set(parts[c.id].entity_ids)) for c in chunks if c.id in parts]

    def _persist(
        self,
        extractions: list[ChunkExtraction],
        sightings: list[tuple[ChunkSighting, ConsumerRecord]],
    ) -> tuple[list[ChunkExtraction], list[WriteFailure]]:
        """Graph, then mirror, for the whole batch in one write. If that write fails for a reason that is neither an
        outage nor a stop (core/failures.py), one message at a time, so only what cannot be written is
        dead-lettered. Returns the extractions written and the failures as (the chunk, or the sighting with its
        message; exception; reason)."""
        try:
            self._write(extractions, [s for s, _ in sightings])
            self._wrote.update(journal_id(x.chunk) for x in extractions)
            return extractions, []
        except Exception as exc:
            if must_stop(exc):
                raise
            log.warning("batch write failed (%s): writing message by message", describe(exc))
        written: list[ChunkExtraction] = []
        failures: list[WriteFailure] = []
        units: list[_WriteUnit] = [(x.chunk, [x], []) for x in extractions]
        units += [((s, r), [], [s]) for s, r in sightings]
        for unit, xs, ss in units:
            try:
                self._write(xs, ss)
                self._wrote.update(journal_id(x.chunk) for x in xs)
                written += xs
            except Exception as exc:
                if must_stop(exc):
                    raise
                for x in xs:  # dead-lettered: not retried, so no longer held as linked
                    self._forget(x.chunk)
                failures.append((unit, exc, WRITE_ERROR))
        return written, failures

    def _write(self, extractions: list[ChunkExtraction], sightings: list[ChunkSighting]) -> None:
        self.store.write_batch(
            chunks=[x.chunk for x in extractions],
            sightings=sightings,
            marked={x.chunk.id: x.marked_text for x in extractions},
            entities=[e for x in extractions for e in x.entities],
            mentions=[(x.chunk.id, m.entity_id) for x in extractions for m in x.mentions],
            interactions=[i for x in extractions for i in x.interactions],
            journals=self._journal_rows(extractions),
        )
        for x in extractions:
            self._wrote.add(journal_id(x.chunk))  # in the graph: its operations stay in the index
            self._forget(x.chunk)
        if self.mirror and extractions:  # right after the graph write, same step: a failure means no commit
            mirror_from_graph(
                self.store,
                self.mirror,
                (i.id for x in extractions for i in x.interactions),
                (x.chunk.id for x in extractions),
            )

    def _journal_rows(self, extractions: list[ChunkExtraction]) -> list[JournalRow]:
        """The journals of the batch, ordered as they were linked (the order a restarted stage replays them in).
        A chunk linking did not read (a language the model was not trained on) has an empty one: it marks the
        chunk as written whole all the same."""
        rows: list[JournalRow] = []
        for x in extractions:
            linked = self._linked.get(journal_id(x.chunk))
            if linked is not None:
                body = x.journal.model_dump_json() if x.journal is not None else journals.NO_JOURNAL
                rows.append(JournalRow.of(journal_id(x.chunk), x.chunk.id, linked[0], body, x.chunk.article_id))
        return rows

    def acknowledged(self, output: StageOutput[ExtractAck]) -> None:
        self.openie.dead_lettered(output.after_ack.given_up)  # their dead letters are on the broker

    def committed(self, output: StageOutput[ExtractAck]) -> None:
        if self.llm and output.after_ack.outcomes is not None:
            self.llm.settle(output.after_ack.outcomes)

    def extract(self, chunks: list[Chunk]) -> list[ChunkExtraction]:
        """Linking for every variant; M0 and M1 interactions here (M2 runs over the graph, after the write).
        Raises the first chunk's failure (`extract text`); the stage uses extract_each. What the chunks taught the
        index is kept (nothing is written here)."""
        self.extractor.linker.mark()
        try:
            extractions, failures = self.extract_each(chunks)
        finally:
            self._wrote.update(self._applied)
            self._settle()
        if failures:
            raise failures[0][1]
        return extractions

    def extract_each(
        self,
        chunks: list[Chunk],
    ) -> tuple[list[ChunkExtraction], list[tuple[Chunk, BaseException, str]]]:
        """(extractions, failures): every chunk in its own guard; infrastructure failures propagate. A chunk this
        process linked already (its batch is being retried after an outage) is not linked again: its journal is
        replayed (the outage rolled its operations back), so the index learns from it once, as in a run without
        the outage, and its M1 answer is kept."""
        failures = self._link_each(chunks)
        extractions = [self._linked[journal_id(c)][1] for c in chunks if journal_id(c) in self._linked]
        linked = len(failures)
        extractions = self.openie.extract(extractions, failures)
        for chunk, _, _ in failures[linked:]:  # (M1) a chunk whose answer failed is dead-lettered, not retried
            self._forget(chunk)
        return extractions, failures

    def _link_each(self, chunks: list[Chunk]) -> list[tuple[Chunk, BaseException, str]]:
        """Parse, link and (M0) extract each chunk, remembering each as linked, in order, until it is written; a
        chunk linked already (a retried batch) has its journal replayed in its place instead, unless the index
        holds it still. A chunk that fails is rolled back before the next is linked: no later chunk sees it."""
        failures: list[tuple[Chunk, BaseException, str]] = []
        fresh = [c for c in chunks if journal_id(c) not in self._linked]
        docs = dict(zip((c.id for c in fresh), self.extractor.parse(fresh), strict=True)) if fresh else {}
        linker = self.extractor.linker
        for chunk in chunks:
            key = journal_id(chunk)
            if key in self._linked:
                if key not in self._applied:
                    journal = self._linked[key][1].journal
                    if journal is not None:
                        linker.replay(journal)
                    self._applied[key] = journal
                    self._linked[key] = (self._next_order(), self._linked[key][1])  # the order it is applied in
                continue
            mark = linker.mark()
            try:
                doc = docs[chunk.id]
                if isinstance(doc, BaseException):
                    raise doc
                refuse_unwritable(chunk)  # before it teaches the linker anything
                extraction = self.extractor.link_one(chunk, doc)
                self._linked[key] = (self._next_order(), extraction)
                self._applied[key] = extraction.journal
                self.openie.on_linked(extraction, doc)
            except Exception as exc:
                linker.rollback(mark)  # what it taught, undone before the next chunk is linked
                self._applied.pop(key, None)
                self._forget(chunk)
                if must_stop(exc):
                    raise
                failures.append((chunk, exc, WRITE_ERROR if isinstance(exc, Unwritable) else EXTRACTION_ERROR))
        return failures

    def pending_counts(self, extractions: list[ChunkExtraction]) -> Pending:
        """The mentions of the batch in hand that the graph's daily counts do not count yet, chunk id → (day,
        ingestion day, entity ids): each chunk once, and never one the graph counts already."""
        counted = mention_counts.counted(self.store.conn, [x.chunk.id for x in extractions])
        return {
            x.chunk.id: (*as_of_key(x.chunk), {m.entity_id for m in x.mentions})
            for x in extractions
            if x.chunk.id not in counted
        }

    def _next_order(self) -> int:
        """Increasing within the process, and across restarts by the clock: the order journals replay in (a
        wall-clock value: graph/store/schema.py WALL_CLOCK keeps it out of exports and comparisons)."""
        self._order = max(int(time.time() * 1000) * journals.PER_BATCH, self._order + 1)
        return self._order

    def _forget(self, chunk: Chunk) -> None:
        self._linked.pop(journal_id(chunk), None)
        self.openie.forget(chunk)

    def subject_ids(
        self, end_day: int, ingested_by: int, pending: Mapping[str, tuple[int, int, set[str]]] | None = None
    ) -> set[str]:
        """Target subjects as of a chunk published on end_day and ingested on ingested_by (see targets.py)."""
        if self.options.subjects:
            index = self.extractor.linker.index
            found = (index.lookup(name, "PERSON") or index.lookup(name, "ORG") for name in self.options.subjects)
            return {d.entity_id for d in found if d}
        return set(
            self.mention_stats.top_subjects(self.options.top_n, end_day, self.options.window_days, ingested_by, pending)
        )

    def touched_pairs(self, chunks: list[tuple[Chunk, set[str]]]) -> list[tuple[str, str]]:
        """Target pairs (subject, co-occurring object) by TF-IDF that this batch's chunks (with the entities each
        mentions) mention, ranked as of each chunk (grouped by its day and ingestion day, so batch boundaries
        change nothing)."""
        pairs: dict[tuple[str, str], None] = {}
        for key in sorted({as_of_key(chunk) for chunk, _ in chunks}):
            subjects = self.subject_ids(*key)
            ranked = self.mention_stats.top_pairs(
                subjects, self.options.top_n * 4, key[0], self.options.window_days, key[1]
            )
            present = [ids for chunk, ids in chunks if as_of_key(chunk) == key]
            pairs.update((p, None) for p in ranked if any(set(p) <= ids for ids in present))
        return list(pairs)

    def tick(self) -> bool:
        """Every step, records or not: M2 remainders that waited long enough, and batches to try again."""
        return self.openie.tick()

    def on_idle(self) -> bool:
        """The stream has caught up (batch runs): the pairs' last, shorter batches go out too."""
        return self.openie.on_idle()


class ExtractRunner(StageRunner[ExtractAck]):
    """The shared poll-handle-commit step, then the stage's own clock: overdue M2 remainders go out even when no
    message arrives (a long-running stage never sees on_idle), and their dead letters are sent and acknowledged
    before the graph notes the batch as given up. The clock runs under the runner's outage handling (`deferred`):
    an outage while it flushes a remainder postpones it with backoff, and it waits while a batch is held."""

    stage: ExtractStage

    def step(self, timeout_ms: int = 1000) -> int:
        moved = super().step(timeout_ms)
        if self.held is None:
            self.deferred(self.stage.tick)
        if given_up := self.stage.openie.given_up():
            generation = self.producer.generation
            try:
                self.write([Outgoing(self.dlq_topic, g.letter.key, g.letter) for g in given_up])
            except Exception as exc:
                if not self.absorbed(exc, generation):
                    raise
                # The give-ups stay in the scheduler until acknowledged: sent again on a later step.
                log.warning("%s: %d give-ups not dead-lettered yet (%s)", self.stage.name, len(given_up), exc)
                return moved
            self.stage.openie.dead_lettered(given_up)
            self.stats.dead += len(given_up)
        return moved
