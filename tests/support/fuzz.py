"""Hypothesis strategies of bad input for the stages (tests/unit/test_fuzz_stages.py fuzzes `handle` with them,
tests/integration/test_fuzz_pipeline.py sends a batch drawn from them through the real broker), and the reason
codes a stage may give such input."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from newskg.core.records import RECORD_TYPES, RawArticle
from newskg.ingest.kafka.client import ConsumerRecord

# README "Dead letters": the codes the process and extract stages give bad input.
REASONS = {
    "malformed_json",
    "undecodable_bytes",
    "binary_payload",
    "too_large",
    "empty_extraction",
    "unparseable_date",
    "missing_date",
    "unsupported_schema_version",
    "invalid_record",
    "wrong_kind",
    "processing_error",
    "empty_message",
}
FUZZ = settings(  # bounded and derandomised: the same cases on every run
    max_examples=40,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
MAX_PAGE_BYTES = 200_000
GOOD = RawArticle(
    text="Doja Cat met Jared Leto at the Met Gala in New York on Monday. The two talked about cats.",
    source="wire",
    fetched_at="2024-03-01T08:00:00Z",
    published="2024-03-01",
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def record_of_wrong_types(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Every field of the kind present, each with an arbitrary JSON value (mostly the wrong type)."""
    fields = list(RECORD_TYPES[kind].model_fields)
    return st.fixed_dictionaries({name: json_values for name in fields}).map(lambda d: {"kind": kind, **d})


def raw(**changes: Any) -> dict[str, Any]:
    return {"kind": "RawArticle", **GOOD.model_dump(mode="json"), **changes}


def encoded(obj: Any) -> bytes:
    return json.dumps(obj).encode()


html_pages = st.one_of(
    st.integers(0, 3000).map(lambda n: "<div>" * n + "x" + "</div>" * (n // 2)),  # deeply nested, unclosed
    st.text(max_size=300).map(lambda t: f"<html><body><p>{t}"),  # truncated
    st.just("<html><head><title>t</title></head><body><script>x()</script></body></html>"),  # no text
    st.binary(max_size=200).map(lambda b: b.decode("latin-1")),  # binary as a string
    st.text(max_size=200),
)
dates = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["0000-00-00", "2024-02-30", "99999-01-01", "0001-01-01", "-1", "1e308", "2024-13-01T25:61Z"]),
    st.integers().map(str),
    st.dates().map(str),
)
bad_payloads = st.one_of(
    st.binary(max_size=300),
    st.sampled_from(list(RECORD_TYPES)).flatmap(record_of_wrong_types).map(encoded),
    st.integers().filter(lambda v: v != 1).map(lambda v: encoded(raw(schema_version=v))),
    json_values.map(encoded),
    st.integers(1, 60_000).map(lambda n: ("[" * n + "]" * n).encode()),  # nesting deeper than json allows
    st.integers(MAX_PAGE_BYTES, 2 * MAX_PAGE_BYTES).map(lambda n: encoded(raw(text="x" * n))),  # a huge field
    html_pages.map(lambda page: encoded(raw(text=None, html=page, published=None))),
    dates.map(lambda d: encoded(raw(published=d))),
    st.text(max_size=50).map(lambda k: encoded(raw(kind=k))),
)


def consumer_record(topic: str, value: bytes | None, offset: int) -> ConsumerRecord:
    """A message as a stage's consumer hands it over (partition 0, no key)."""
    size = len(value) if value is not None else -1
    return ConsumerRecord(topic, 0, None, offset, 0, 0, None, value, [], None, -1, size, -1)
