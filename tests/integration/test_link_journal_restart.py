"""A restarted extract stage links as if it had never stopped (extract/entities/journal.py), on the real graph
server and mirror: one stage writes the first half of a stream and stops; a new stage, built as `newskg run
extract` builds it (its linker from the graph), gets the rest with the last written chunk redelivered. The graph
and the new stage's alias index equal one undisturbed stage's, and the redelivered chunk is re-mirrored, not
linked again. (tests/chaos/test_crash_restarts.py does the same with kill -9 on real processes.)"""

from __future__ import annotations

from dataclasses import asdict

import pytest

from newskg.core.records import Chunk
from newskg.extract.stage import ExtractStage
from newskg.graph.mirror.qdrant import CHUNKS
from newskg.graph.store.export import export_jsonl
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


def test_review_finding_a_chunk_counted_before_a_sigkill_is_not_counted_again_by_the_restart(isolated: Isolated):
    """review finding: "A SIGKILL after the mention recount but before the linking journals (FalkorDB writes of a
    batch are not atomic) makes the restart count those chunks' mentions twice, which can change the TF-IDF
    subjects and so the M1 calls." A batch [Q, R] naming Y: undisturbed, both are pending (not in the graph yet).
    Killed after Q's mentions were written and counted but before its journal, the restarted stage links Q again:
    Q is counted by the graph and no longer as pending, so the subjects are the undisturbed ones. The cut just
    before the recount (mentions written, counts not) is repaired by recounting first."""
    from types import SimpleNamespace

    from newskg.core.records import Entity
    from newskg.graph.store.mentions import daily_counts
    from tests.support.records import dated_chunk

    day = 20230503
    x = Entity(id="e_xray", name="Xavier Ray", type="PERSON")
    y = Entity(id="e_alpha", name="Yusuf Alpha", type="PERSON")
    earlier = [dated_chunk(f"Xavier Ray spoke {n}.", day, article=f"x{n}") for n in range(3)]
    q = dated_chunk("Yusuf Alpha arrived on Monday.", day - 1, article="q", ingested_day=day)
    r = dated_chunk("Yusuf Alpha left on Wednesday.", day, article="r")
    batch = [SimpleNamespace(chunk=c, mentions=[SimpleNamespace(entity_id=y.id)]) for c in (q, r)]

    def subjects(stage: ExtractStage) -> tuple[set[str], list[str]]:
        pending = stage.pending_counts(batch)  # type: ignore[arg-type]
        return set(pending), stage.mention_stats.top_subjects(10, day, 7, day, pending)

    results = {}
    for name in ("undisturbed", "killed", "cut before the recount"):
        world = isolated.fresh()
        with Wiring(world.settings) as wiring:
            store = wiring.store()
            store.init()
            store.write_batch(chunks=earlier, entities=[x], mentions=[(c.id, x.id) for c in earlier])
            if name != "undisturbed":
                # everything of Q's batch write but its journal (written last): the SIGKILL came in between
                store.write_batch(chunks=[q], entities=[y], mentions=[(q.id, y.id)])
                assert daily_counts(store.conn, y.id, day - 7, day) == {day - 1: 1}
            if name == "cut before the recount":
                store.conn.run_many([("MATCH (d:EntityDay {entity_id: $y}) SET d.chunks = 0", {"y": y.id})])
            results[name] = subjects(extract_stage(wiring, variant="m0"))
            if name != "undisturbed":
                assert daily_counts(store.conn, y.id, day - 7, day) == {day - 1: 1}  # counted once
    assert results["undisturbed"][0] == {q.id, r.id}
    assert results["killed"][0] == results["cut before the recount"][0] == {r.id}
    assert results["killed"][1] == results["cut before the recount"][1] == results["undisturbed"][1]


def test_review_finding_wall_clock_values_are_kept_out_of_what_is_exported_or_compared(isolated: Isolated):
    """review finding: "Wall-clock values are stored in graph nodes (`M2Failed.at`, `Linking.order`): keep them
    out of anything exported or compared." Two graphs written with the same records at other clock times: their
    dumps (tests/support/graph_dump.py) are equal, and `graph export` holds no wall-clock property."""
    from newskg.graph.store.journals import JournalRow
    from newskg.graph.store.schema import WALL_CLOCK
    from tests.support.graph_dump import graph_dump

    chunks = linking_stream()[:2]
    dumps, exports = [], []
    for n, clock in enumerate((1_700_000_000_000, 1_800_000_000_000)):
        with Wiring(isolated.graph_named(f"clock{n}").settings) as wiring:
            store = wiring.store()
            store.init()
            rows = [JournalRow.of(f"lj_{c.id}", c.id, clock + k, "{}") for k, c in enumerate(chunks)]
            store.write_batch(chunks=chunks, journals=rows)
            store.m2_give_up("a|b", [chunks[0].id], "schema", 3, f"at {clock}")
            dumps.append(graph_dump(store.conn))
            lines: list[dict[str, object]] = []
            export_jsonl(store, lines.append)
            exports.append(lines)
    assert dumps[0] == dumps[1]
    assert any('"Linking"' in line for line in dumps[0]) and any('"M2Failed"' in line for line in dumps[0])
    assert exports[0] == exports[1]
    for line in exports[0]:
        assert not set(WALL_CLOCK.get(str(line.get("label")), ())) & set(line["properties"])  # type: ignore[arg-type]
