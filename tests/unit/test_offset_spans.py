"""The stage loop's debug line names each batch's offsets per partition (the scale-out test reads batch
boundaries from it)."""

from types import SimpleNamespace
from typing import Any, cast

from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.stage import offset_spans


def _records(*spans: tuple[str, int, int]) -> list[ConsumerRecord]:
    return [cast(Any, SimpleNamespace(topic=t, partition=p, offset=o)) for t, p, o in spans]


def test_spans_are_first_and_last_offset_per_partition_in_partition_order():
    records = _records(
        ("news.articles", 1, 9), ("news.articles", 0, 4), ("news.articles", 1, 8), ("news.articles", 1, 11)
    )
    assert offset_spans(records) == "news.articles[0]@4-4, news.articles[1]@8-11"


def test_an_empty_batch_has_no_spans():
    assert offset_spans([]) == ""
