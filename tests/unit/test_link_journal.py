"""The linker's journal (extract/entities/journal.py): a linker that replays the journals of the chunks another
linker linked, and links the rest of the stream, links them exactly as the undisturbed linker did, whatever
point the stream was cut at, halfway through an article included. A linker rebuilt from entity names alone (the
old restart) does not."""

from __future__ import annotations

from dataclasses import asdict

import pytest

from newskg.core.records import Chunk
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import ALWAYS, AliasIndex, Recorded
from newskg.extract.entities.journal import LinkJournal, journal_id
from newskg.extract.entities.linker import Linker
from newskg.extract.result import ChunkExtraction
from tests.support.records import LINKING_STREAM
from tests.support.records import linking_stream as stream


def linked(extractor: ChunkExtractor, chunks: list[Chunk]) -> list[ChunkExtraction]:
    return [extraction for extraction, _ in extractor.link(chunks)]


def outcome(extractions: list[ChunkExtraction]) -> list[object]:
    return [([asdict(m) for m in x.mentions], [e.model_dump() for e in x.entities]) for x in extractions]


def index_state(index: AliasIndex) -> dict[str, object]:
    return {eid: asdict(entity) for eid, entity in sorted(index.entities.items())}


@pytest.mark.parametrize("cut", range(1, len(LINKING_STREAM)))
def test_a_linker_resumed_from_the_journals_links_the_rest_as_the_undisturbed_one(cut: int):
    chunks = stream()
    undisturbed = ChunkExtractor(Linker(AliasIndex()))
    expected = linked(undisturbed, chunks)

    before = linked(ChunkExtractor(Linker(AliasIndex())), chunks[:cut])
    journals = [LinkJournal.model_validate_json(x.journal.model_dump_json()) for x in before if x.journal]
    assert len(journals) == cut  # through JSON, as the graph stores them
    resumed = Linker(AliasIndex())
    for journal in journals:
        resumed.replay(journal)
    after = linked(ChunkExtractor(resumed), chunks[cut:])

    assert outcome(before + after) == outcome(expected)
    assert index_state(resumed.index) == index_state(undisturbed.linker.index)


def test_without_the_journals_a_restart_mid_article_links_otherwise():
    """The old restart (entities from the graph: names and first-seen times) loses the article's memory: the
    third chunk's "Karl" no longer abbreviates Karl Lagerfeld. So the journal is what the test above rests on."""
    chunks = stream()
    expected = linked(ChunkExtractor(Linker(AliasIndex())), chunks)
    first = ChunkExtractor(Linker(AliasIndex()))
    linked(first, chunks[:2])
    rebuilt = AliasIndex()
    for entity in first.linker.index.entities.values():
        rebuilt.add(
            entity.id, entity.name, entity.type, seen=entity.seen or ALWAYS, recorded=Recorded(list(entity.aliases))
        )
    after = linked(ChunkExtractor(Linker(rebuilt)), chunks[2:])
    assert outcome(after) != outcome(expected[2:])


def test_a_record_has_one_journal_id_and_a_new_record_of_the_same_text_another():
    chunk = stream()[0]
    assert journal_id(chunk) == journal_id(chunk.model_copy())
    assert journal_id(chunk) != journal_id(chunk.model_copy(update={"ingested_ms": chunk.ingested_ms + 1}))


def test_a_batch_retried_after_an_outage_is_not_linked_twice():
    """The graph write failed (an outage): the runner hands the same records to the stage again. The chunks it
    linked already are reused, not linked again, so the index counts their mentions and votes once."""
    from types import SimpleNamespace

    from newskg.extract.stage import ExtractOptions, ExtractStage

    chunks = stream()[:2]
    once = Linker(AliasIndex())
    linked(ChunkExtractor(once), chunks)
    retried = Linker(AliasIndex())
    stage = ExtractStage(store=SimpleNamespace(conn=None), extractor=ChunkExtractor(retried), options=ExtractOptions())
    first, _ = stage.extract_each(chunks)
    again, _ = stage.extract_each(chunks)  # the write of `first` never happened
    assert [id(x) for x in again] == [id(x) for x in first]
    assert index_state(retried.index) == index_state(once.index)
