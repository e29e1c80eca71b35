"""A restarted extract stage links as if it had never stopped (extract/entities/journal.py), on the real graph
server and mirror: one stage writes the first half of a stream and stops; a new stage, built as `newskg run
extract` builds it (its linker from the graph), gets the rest with the last written chunk redelivered. The graph
and the new stage's alias index equal one undisturbed stage's, and the redelivered chunk is re-mirrored, not
linked again. (tests/chaos/test_crash_restarts.py does the same with kill -9 on real processes.)"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from core.records import Chunk
from extract.stage import ExtractStage
from graph.mirror.qdrant import CHUNKS
from graph.store.export import export_jsonl
from newskg.pipeline import extract_stage
from newskg.wiring import Wiring
from tests.support.fuzz import consumer_record
from tests.support.isolation import Isolated
from tests.support.records import linking_stream

pytestmark = pytest.mark.integration


def handle(stage: ExtractStage, chunks: list[Chunk], first_offset: int = 0) -> None:
    records = [consumer_record("chunks", c.to_bytes(), first_offset + n) for n, c in enumerate(chunks)]
    output = stage.handle(records)
    assert output.dead == ()


def graph_and_index(stage: ExtractStage) -> tuple[list[str], dict[str, object]]:
    lines: list[str] = []
    export_jsonl(stage.store, lambda line: lines.append(repr(line)))
    index = stage.extractor.linker.index
    return sorted(lines), {eid: asdict(e) for eid, e in sorted(index.entities.items())}


def test_a_restarted_stage_resumes_linking_where_it_stopped_and_does_not_link_a_redelivery_again(
    isolated: Isolated,
):
    chunks = linking_stream()
    undisturbed_world = isolated.fresh()
    with Wiring(undisturbed_world.settings) as wiring:
        stage = extract_stage(wiring)
        wiring.store().init()
        handle(stage, chunks)
        expected = graph_and_index(stage)

    with Wiring(isolated.settings) as wiring:
        wiring.store().init()
        handle(extract_stage(wiring), chunks[:3])  # then it stops, before committing the third chunk
    with Wiring(isolated.settings) as wiring:
        resumed = extract_stage(wiring)  # its linker replays the three chunks' journals from the graph
        mirror = wiring.mirror()
        mirror.delete(CHUNKS, [chunks[2].id])  # it died between the graph write and the mirror write
        handle(resumed, chunks[2:], first_offset=2)  # the third chunk again: redelivered
        got = graph_and_index(resumed)
        assert mirror.graph_ids(CHUNKS) == {c.id for c in chunks}
    assert got == expected
