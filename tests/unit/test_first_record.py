"""Two records of one content id: the stored node keeps the record the system could show first, whole, whatever
order they arrive in (graph/store/writer.py first_key, fold_chunk_rows, fold_interactions)."""

from __future__ import annotations

from itertools import permutations

from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.store.writer import first_key, fold_chunk_rows

DAY_MS = 86_400_000


def row(article: str, published_day: int, ingested_day: int) -> dict[str, object]:
    ingested_ms = end_of_day_ms(ingested_day) - DAY_MS // 2  # noon of that day
    published = f"{str(published_day)[:4]}-{str(published_day)[4:6]}-{str(published_day)[6:]}T08:00:00Z"
    return {
        "id": "c1",
        "article_id": article,
        "day": published_day,
        "ingested_ms": ingested_ms,
        "ingested_day": ingested_day,
        "first_key": first_key(published_day, ingested_ms, published, article),
    }


def test_the_record_visible_first_wins_over_an_earlier_publication_ingested_later():
    live, backfill = row("live", 20230601, 20230601), row("backfill", 20230515, 20230602)
    for order in permutations([live, backfill]):
        (kept,) = fold_chunk_rows(list(order))
        assert kept is live  # whole: its day and its ingestion, never May 15 with June 1


def test_between_records_visible_the_same_day_the_earlier_publication_wins():
    a, b = row("a", 20230510, 20230601), row("b", 20230530, 20230601)
    for order in permutations([a, b]):
        assert fold_chunk_rows(list(order)) == [a]


def test_first_key_orders_like_its_numbers():
    assert first_key(20230601, 1_000) < first_key(20230601, 20_000)
    assert first_key(20231231, 0) < first_key(20240101, 0)


def test_one_sentence_read_in_two_chunks_at_one_instant_keeps_the_higher_confidence_in_any_order():
    """Issue 29: overlapping chunks of one article share its instant and can parse one sentence a little
    differently; the fact kept the confidence of whichever chunk came first, so partition interleavings gave
    exports that differed in it."""
    from newskg.graph.store.writer import fold_interactions
    from tests.support.records import dated_chunk, doja_and_choupette

    fact = doja_and_choupette(dated_chunk("Doja Cat met Choupette.", 20230501), "Doja Cat met Choupette", 20230501)
    lower, higher = fact.model_copy(update={"confidence": 0.602}), fact.model_copy(update={"confidence": 0.699})
    for order in permutations([lower, higher]):
        (kept,) = fold_interactions(list(order))
        assert kept.confidence == 0.699
