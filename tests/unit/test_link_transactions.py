"""The alias index learns from a chunk only once its write succeeded (extract/stage.py, the linker's transaction):
a batch's chunks see the earlier chunks' operations while the batch is linked, a chunk dead-lettered (while
linking, or after: refused by the graph) leaves nothing behind, and a batch write stopped by an outage leaves the
index as before the batch. In every case the index equals a restart's: the journals of the chunks the graph
holds, replayed in order. The graph here is a stand-in (tests/integration/test_link_journal_restart.py and
test_extract_stage.py run the real one)."""

from __future__ import annotations

from dataclasses import asdict
from types import SimpleNamespace
from typing import Any

import pytest
import redis.exceptions

from newskg.core.records import Chunk, ChunkSighting
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.journal import LinkJournal, journal_id
from newskg.extract.entities.linker import Linker, _dump
from newskg.extract.failures import EXTRACTION_ERROR
from newskg.extract.stage import WRITE_ERROR, ExtractOptions, ExtractStage
from newskg.graph.store import journals, reads
from newskg.graph.store.rows import WrittenChunkParts
from tests.support.fuzz import consumer_record
from tests.support.records import linking_stream


def full_state(linker: Linker) -> dict[str, Any]:
    """Everything linking reads: the entities, every lookup table of the index, and the article memories."""
    index = linker.index
    tables = {
        name: {key: dict(value) for key, value in sorted(getattr(index, name).items(), key=repr) if value}
        for name in ("_by_key", "_by_acronym", "_keys_by_type", "_person_parts", "_by_first_word")
    }
    return {
        "entities": {eid: asdict(e) for eid, e in sorted(index.entities.items())},
        "tables": tables,
        "merged": dict(sorted(index.merged.items())),
        "articles": [(a, memory(m)) for a, m in linker._articles.items()],
    }


def memory(m: Any) -> dict[str, Any]:
    """An article memory as data; a zero vote weighs nothing (linking notes it, a journal does not carry it)."""
    dumped = _dump(m).model_dump()
    dumped["votes"] = [v for v in dumped["votes"] if v[-1]]
    return dumped


def replayed(journal_texts: list[str]) -> Linker:
    """A restart: a new linker taught the journals, in order (extract/entities/journal.py replay_all)."""
    linker = Linker(AliasIndex())
    for text in journal_texts:
        if text != journals.NO_JOURNAL:
            linker.replay(LinkJournal.model_validate_json(text))
    return linker


def undisturbed(chunks: list[Chunk]) -> Linker:
    linker = Linker(AliasIndex())
    ChunkExtractor(linker).link(chunks)
    return linker


class Graph:
    """A stand-in for the graph: write_batch keeps the batch (or refuses it), reads answer the journals asked for."""

    def __init__(self) -> None:
        self.journals: list[journals.JournalRow] = []
        self.chunk_ids: list[str] = []
        self.sightings: list[ChunkSighting] = []
        self.refuse: set[str] = set()  # chunk ids whose write fails as bad data
        self.outage = False  # every write fails as an outage
        self.outage_after_write = False  # the graph takes the write, then the connection drops
        self.conn = SimpleNamespace(read=self.read)

    def write_batch(self, chunks=(), sightings=(), journals=(), **_: object) -> None:
        chunks = list(chunks)
        if self.outage:
            raise redis.exceptions.ConnectionError("graph down")
        if any(c.id in self.refuse for c in chunks):
            raise ValueError("the graph refuses this chunk")
        self.chunk_ids += [c.id for c in chunks]
        self.sightings += list(sightings)
        self.journals += list(journals)
        if self.outage_after_write:
            raise redis.exceptions.ConnectionError("connection lost after the write")

    def read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if query is journals.JOURNALS_OF_CHUNKS:
            return [
                {"chunk_id": j.chunk_id, "id": j.id, "article_id": j.article_id}
                for j in self.journals
                if j.chunk_id in params["ids"]
            ]
        if query == reads.WRITTEN_CHUNK_PARTS:
            return [asdict(WrittenChunkParts(id=i, entity_ids=[], interaction_ids=[])) for i in params["ids"]]
        raise AssertionError(f"unexpected read {query}")

    def journal_texts(self) -> list[str]:
        return [journals.unpack(j.body) for j in sorted(self.journals, key=lambda j: (j.order, j.id))]


def stage(graph: Graph, linker: Linker | None = None) -> ExtractStage:
    return ExtractStage(store=graph, extractor=ChunkExtractor(linker or Linker(AliasIndex())), options=ExtractOptions())  # type: ignore[arg-type]


def records(chunks: list[Chunk], first: int = 0, partition: int = 0):
    return [
        consumer_record("chunks", c.to_bytes(), first + n)._replace(partition=partition) for n, c in enumerate(chunks)
    ]


def test_review_finding_a_chunk_refused_by_the_graph_leaves_no_index_operations_behind():
    """review finding: "Linking changes the in-memory alias index before the write: a chunk later dead-lettered
    leaves its index operations behind, so later chunks link against entities the graph does not have, and after a
    restart (journals replayed) they link differently." The first chunk (it names Jared Leto, Doja Cat, the Met
    Gala in full) is refused by the graph after the batch was linked: the index keeps exactly the operations of
    the chunks written, as a restart replaying their journals has them."""
    chunks = linking_stream()
    graph = Graph()
    graph.refuse = {chunks[0].id}
    extract = stage(graph)
    output = extract.handle(records(chunks))
    assert [d.reason for d in output.dead] == [WRITE_ERROR]
    assert graph.chunk_ids == [c.id for c in chunks[1:]]
    assert full_state(extract.extractor.linker) == full_state(replayed(graph.journal_texts()))
    # (the old behaviour kept the refused chunk's operations: a different index)
    assert full_state(undisturbed(chunks)) != full_state(replayed(graph.journal_texts()))


def test_review_finding_a_chunk_that_fails_while_linking_is_undone_before_the_next_chunk_is_linked():
    """review finding: "a chunk later dead-lettered leaves its index operations behind". A chunk whose extraction
    raises after the linker applied its operations is rolled back at once: the later chunks of its batch link as if
    it had never come, and the index is theirs alone."""

    class FailsAfterLinking(Linker):
        def link(self, doc, article_id, as_of=None):
            mentions = super().link(doc, article_id, as_of)
            if "Met Gala" in doc.text:
                raise KeyError("a bug after the index learned the chunk")
            return mentions

    chunks = linking_stream()
    graph = Graph()
    extract = stage(graph, FailsAfterLinking(AliasIndex()))
    output = extract.handle(records(chunks))
    assert [d.reason for d in output.dead] == [EXTRACTION_ERROR]
    assert graph.chunk_ids == [c.id for c in chunks[1:]]
    alone = undisturbed(chunks[1:])
    assert full_state(extract.extractor.linker) == full_state(alone) == full_state(replayed(graph.journal_texts()))


def test_review_finding_a_batch_write_stopped_by_an_outage_leaves_the_index_as_before_the_batch():
    """review finding: "Apply a chunk's index operations only once its write succeeded." The second batch's write
    meets an outage: the index is as after the first batch; the retried batch replays its journals (not linked
    again: its extractions are kept) and ends as one undisturbed pass."""
    chunks = linking_stream()
    graph = Graph()
    extract = stage(graph)
    extract.handle(records(chunks[:3]))
    after_first = full_state(extract.extractor.linker)
    assert after_first == full_state(undisturbed(chunks[:3]))

    graph.outage = True
    with pytest.raises(redis.exceptions.ConnectionError):
        extract.handle(records(chunks[3:], 3))
    assert full_state(extract.extractor.linker) == after_first
    kept = {key: x for key, (_, x) in extract._linked.items()}
    assert set(kept) == {journal_id(c) for c in chunks[3:]}

    graph.outage = False
    output = extract.handle(records(chunks[3:], 3))
    assert output.dead == ()
    assert full_state(extract.extractor.linker) == full_state(undisturbed(chunks))
    assert full_state(extract.extractor.linker) == full_state(replayed(graph.journal_texts()))
    assert extract._linked == {} and set(kept) == {j.id for j in graph.journals[3:]}


def test_review_finding_a_write_the_graph_took_before_the_connection_dropped_is_kept_on_the_retry():
    """review finding: "Apply a chunk's index operations only once its write succeeded." The graph took the batch
    but the stage saw an outage: the operations were rolled back with the batch; on the retry the chunks are found
    written whole, so their journals are replayed (not linked again, not written again)."""
    chunks = linking_stream()
    graph = Graph()
    extract = stage(graph)
    graph.outage_after_write = True
    with pytest.raises(redis.exceptions.ConnectionError):
        extract.handle(records(chunks[:4]))
    assert full_state(extract.extractor.linker) == full_state(Linker(AliasIndex()))
    graph.outage_after_write = False
    output = extract.handle(records(chunks[:4]) + records(chunks[4:], 4))
    assert output.dead == ()
    assert graph.chunk_ids == [c.id for c in chunks]  # the first four once, as the first write left them
    assert full_state(extract.extractor.linker) == full_state(undisturbed(chunks))
    assert full_state(extract.extractor.linker) == full_state(replayed(graph.journal_texts()))


def test_review_finding_a_chunk_written_whole_gains_the_new_records_sighting_and_nothing_else():
    """review finding: "Re-ingesting identical pages changes the graph": the extract stage extracted a chunk it
    had written whole again, because the new record has a later ingestion instant and links against a larger
    index. Any later record of a chunk written whole for its article (another ingestion instant, a backfill) is
    now a sighting, at similarity 1: no chunk row, no journal, no index operation. The same text in another
    article stays that article's own record, extracted as of its own times: whether it came first or second
    depends on how partitions interleave, so it must not decide what the graph holds."""
    chunks = linking_stream()
    graph = Graph()
    extract = stage(graph)
    extract.handle(records(chunks))
    before = full_state(extract.extractor.linker)
    written, journal_count = list(graph.chunk_ids), len(graph.journals)

    later = chunks[0].model_copy(update={"ingested_ms": chunks[-1].ingested_ms + 10_000})
    backfill = chunks[1].model_copy(update={"ingested_ms": 1})
    output = extract.handle(records([later, backfill], 10))
    assert output.dead == ()
    assert graph.chunk_ids == written and len(graph.journals) == journal_count
    assert sorted((s.chunk_id, s.article_id, s.similarity, s.ingested_ms) for s in graph.sightings) == [
        (later.id, "a1", 1.0, later.ingested_ms),
        (backfill.id, "a1", 1.0, 1),
    ]  # (a batch is taken in ingestion order: the backfilled record first)
    assert full_state(extract.extractor.linker) == before

    elsewhere = chunks[1].model_copy(update={"article_id": "a9", "article_ids": ["a9"], "ingested_ms": 99_000})
    extract.handle(records([elsewhere], 20))
    assert graph.chunk_ids == [*written, elsewhere.id] and len(graph.journals) == journal_count + 1


def test_copies_of_a_chunk_in_one_batch_are_extracted_once_per_article():
    """A redelivered or re-ingested copy of an article's chunk in the same batch is extracted once (and
    dead-lettered with it); another article's copy is its own record, as it would be in another batch."""
    chunk = linking_stream()[0]
    again = chunk.model_copy(update={"ingested_ms": chunk.ingested_ms + 1})
    other = chunk.model_copy(update={"article_id": "a9", "article_ids": ["a9"], "ingested_ms": chunk.ingested_ms + 2})
    graph = Graph()
    output = stage(graph).handle(records([chunk, again, other]))
    assert output.dead == () and graph.chunk_ids == [chunk.id, chunk.id]
    assert sorted(j.article_id for j in graph.journals) == ["a1", "a9"]

    refused = Graph()
    refused.refuse = {chunk.id}
    output = stage(refused).handle(records([chunk, again]))
    assert len(output.dead) == 2 and refused.sightings == [] and refused.journals == []


def test_rolling_back_to_a_mark_restores_the_index_and_the_article_memories_exactly():
    """The linker's transaction itself: chunks linked after a mark are undone to the byte, whatever they touched
    (new entities, aliases, votes, context words, alias edges, the LRU order of article memories)."""
    chunks = linking_stream()
    linker = Linker(AliasIndex())
    extractor = ChunkExtractor(linker)
    extractor.link(chunks[:2])
    linker.commit()
    states = [full_state(linker)]
    marks = []
    for chunk in chunks[2:]:
        marks.append(linker.mark())
        extractor.link([chunk])
        states.append(full_state(linker))
    for n in range(len(marks) - 1, -1, -1):
        linker.rollback(marks[n])
        assert full_state(linker) == states[n]
    linker.commit()
    assert full_state(linker) == full_state(undisturbed(chunks[:2]))
