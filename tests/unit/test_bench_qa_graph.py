"""The QA bench's synthetic graph (bench/qa_graph.py): proportional chunks and entities, hubs, and questions about
entities known by their day."""

from __future__ import annotations

from collections import Counter

from bench import qa_graph


def test_the_graph_has_proportional_chunks_and_entities_of_skewed_popularity():
    rows = 20_000
    batches = list(qa_graph.batches(rows))
    facts = [f for b in batches for f in b.facts]
    chunks = [c for b in batches for c in b.chunks]
    assert len(facts) == rows and len(chunks) == rows // qa_graph.FACTS_PER_CHUNK
    assert len(qa_graph.entities(rows)) == rows // qa_graph.FACTS_PER_ENTITY
    degree = Counter(e for f in facts for e in (f.subject_id, f.object_id))
    busiest, median = degree.most_common(1)[0][1], sorted(degree.values())[len(degree) // 2]
    assert busiest > 50 * median  # a hub, and a long tail
    for b in batches:
        for chunk in b.chunks:
            stated = [f for f in b.facts if f.chunk_ids == [chunk.id]]
            assert len(stated) == qa_graph.FACTS_PER_CHUNK and all(f.event_day == chunk.day for f in stated)
            assert all(f.subject_id != f.object_id for f in stated)
            assert sorted({e for f in stated for e in (f.subject_id, f.object_id)}) == b.mentions[chunk.id]


def test_the_graph_is_the_same_for_every_run_of_a_size():
    first, again = (next(qa_graph.batches(5_000)) for _ in range(2))
    assert [f.id for f in first.facts] == [f.id for f in again.facts]


def test_every_question_asks_about_an_entity_a_fact_names_by_its_day():
    batch = next(qa_graph.batches(5_000))
    known: dict[str, int] = {}
    for f in batch.facts:
        for name in (f.subject_name, f.object_name):
            known[name] = min(known.get(name, f.published_day), f.published_day)
    for name, day in qa_graph.asked_of(batch):
        assert known[name] <= int(day.replace("-", ""))
