"""Issue #29: an entity record says what its own chunk showed, as of that chunk (extract/entities/linker.py
`Linker.entities`), and the store folds a batch's records the way the graph keeps them, in any order
(graph/store/writer.py `_entity_rows`)."""

from __future__ import annotations

from itertools import permutations

from newskg.core.records import Entity
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.graph.store.writer import _entity_rows  # pyright: ignore[reportPrivateUsage]
from tests.support.records import linking_stream as stream


def test_a_record_carries_its_chunks_spellings_and_times_only():
    extractor = ChunkExtractor(Linker(AliasIndex()))
    records = {}
    for extraction, _ in extractor.link(stream()):
        chunk, journal = extraction.chunk, extraction.journal
        assert journal is not None
        for entity in extraction.entities:
            shown = {op.text for op in journal.ops if op.op in ("add", "alias") and op.entity_id == entity.id}
            assert entity.seen == (chunk.day, chunk.ingested_ms)
            assert set(entity.aliases) <= shown, (chunk.id, entity)
            records[(chunk.id, entity.name if entity.spelled else None)] = entity
    # "Leto said on Tuesday …" (c3, another article): the index knows "Jared Leto" and "Leto" by then, but the
    # chunk showed "Leto" alone and did not spell the name: it neither dates "Jared Leto" nor names the entity.
    leto = records[("c3", None)]
    assert leto.aliases == ["Leto"] and not leto.spelled
    assert records[("c4", "Jared Leto")].aliases == ["Jared Leto"]


def test_a_batch_folds_to_the_same_rows_in_any_order():
    day = (20230710, 1_688_990_000_000)
    later = (20230720, 1_689_850_000_000)
    records = [
        Entity(id="e", name="TWITTER", type="PRODUCT", aliases=["TWITTER", "X"], seen=later),
        Entity(id="e", name="Twitter", type="ORG", aliases=["Twitter"], seen=day),
        Entity(id="e", name="twitter", type="PERSON", aliases=["X"], seen=(20230705, day[1] - 1), spelled=False),
        Entity(id="e", name="Twitter", type="ORG", aliases=["Tw"], alias_seen={"Tw": (0, 0)}, seen=later),
    ]
    folded = [_entity_rows(order) for order in permutations(records)]
    assert all(rows == folded[0] for rows in folded)
    (row,) = folded[0]
    assert (row["name"], row["type"]) == ("Twitter", "PERSON")  # the earliest spelling; the earliest record's type
    assert {a["name"]: a["day"] for a in row["aliases"]} == {
        "TWITTER": 20230720,
        "Tw": 0,
        "Twitter": 20230710,
        "X": 20230705,
    }
