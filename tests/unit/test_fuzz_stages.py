"""Bad input, fuzzed (hypothesis, derandomised and bounded): whatever bytes reach the process or extract stage,
`handle` returns; every bad message is a dead letter with a documented reason code, never an exception escaping
the stage; a good article in the same batch still comes out. The same through the real broker, process and
extract: tests/integration/test_fuzz_pipeline.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from newskg.core.records import Chunk, ChunkSighting, DeadLetter, RawArticle, RecordError, decode_any
from newskg.core.settings import Settings
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.stage import ExtractOptions, ExtractStage
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.process.dates import choose_date
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.guards import Rejected
from newskg.ingest.process.stage import ProcessStage
from newskg.ingest.sources.feeds import parse_feed
from newskg.ingest.sources.files import read_file
from newskg.qa.dates import find_date
from tests.support.fuzz import FUZZ, GOOD, MAX_PAGE_BYTES, REASONS, bad_payloads, consumer_record, dates


def message(value: bytes | None, offset: int, topic: str = "news.articles") -> ConsumerRecord:
    return consumer_record(topic, value, offset)


_settings = Settings(max_page_bytes=MAX_PAGE_BYTES)


def process_stage() -> ProcessStage:
    """A fresh dedup index each example: the good article is new every time."""
    return ProcessStage(_settings, DedupIndex(0.7, _settings.dedup_num_perm), None)


# M0 reads nothing from the graph while decoding and extracting: a store without a connection is enough here.
extract = ExtractStage(
    store=SimpleNamespace(conn=None),  # pyright: ignore[reportArgumentType]
    extractor=ChunkExtractor(Linker(AliasIndex())),
    options=ExtractOptions(),
)


@FUZZ
@given(batch=st.lists(bad_payloads | st.none(), min_size=1, max_size=4))
def test_the_process_stage_dead_letters_bad_input_with_a_reason_and_keeps_the_good(batch: list[bytes | None]):
    records = [message(value, offset) for offset, value in enumerate(batch)]
    good = message(GOOD.to_bytes(), len(batch))
    output = process_stage().handle([*records, good])  # never raises
    letters = {d.offset: d for d in output.dead}
    assert good.offset not in letters
    assert all(d.reason in REASONS and d.detail for d in output.dead), [(d.reason, d.detail) for d in output.dead]
    assert {d.stage for d in output.dead} <= {"process"}
    for record in records:
        if record.offset not in letters:  # it was an article after all (e.g. a date that parses)
            RawArticle.from_bytes(record.value or b"")
    assert any(m.key is not None and m.record.KIND in ("Chunk", "ChunkSighting") for m in output.messages)


def chunk_like(payload: bytes) -> bool:
    try:
        return isinstance(decode_any(payload), Chunk | ChunkSighting)
    except RecordError:
        return False


@FUZZ
@given(batch=st.lists(bad_payloads.filter(lambda p: not chunk_like(p)), min_size=1, max_size=4))
def test_the_extract_stage_dead_letters_every_message_it_cannot_decode(batch: list[bytes]):
    records = [message(value, offset, "news.chunks") for offset, value in enumerate(batch)]
    output = extract.handle(records)  # never raises
    assert sorted(d.offset for d in output.dead) == [r.offset for r in records]
    assert all(d.reason in REASONS and d.stage == "extract" for d in output.dead)


def test_json_nested_past_the_parser_s_limit_or_an_odd_kind_is_a_record_error():
    # Found by the fuzzing above: json.loads raises RecursionError on deep nesting, and a list as `kind` was
    # looked up in a dict (TypeError); either escaped the extract stage's guard and stopped the consumer.
    for payload, reason in [
        (b"[" * 100_000 + b"]" * 100_000, "malformed_json"),
        (b'{"kind": ["Chunk"]}', "wrong_kind"),
        (b"\xff\xfe{", "undecodable_bytes"),
    ]:
        with pytest.raises(RecordError) as caught:
            decode_any(payload)
        assert caught.value.reason == reason
        with pytest.raises(RecordError):
            Chunk.from_bytes(payload)


@FUZZ
@given(lines=st.lists(st.one_of(bad_payloads, st.binary(max_size=80)), min_size=1, max_size=5))
def test_every_jsonl_line_becomes_an_article_or_raw_bytes_for_the_stage_to_judge(lines: list[bytes], tmp_path_factory):
    path = tmp_path_factory.mktemp("jsonl") / "fuzz.jsonl"
    path.write_bytes(b"\n".join(line.replace(b"\n", b" ").replace(b"\r", b" ") for line in lines))
    items = list(read_file(path, None, None, "2024-03-01T08:00:00Z"))  # never raises
    assert len(items) <= len(lines)
    # A DeadLetter: a line the source itself rejects (a URL that does not parse, a line over the size cap).
    assert all(isinstance(item.value, RawArticle | bytes | DeadLetter) and item.key for item in items)


feeds = st.one_of(
    st.binary(max_size=300),
    st.text(max_size=200).map(lambda t: f"<?xml version='1.0'?><rss><channel><item><title>{t}".encode()),
    st.tuples(st.text(max_size=40), st.text(max_size=40)).map(
        lambda pair: (
            "<rss version='2.0'><channel><title>f</title><item><link>{}</link><pubDate>{}</pubDate></item>"
            "</channel></rss>".format(*pair)
        ).encode()
    ),
    st.integers(0, 5000).map(lambda n: ("<rss>" + "<channel>" * n + "</rss>").encode()),
    st.just(b"<?xml version='1.0'?><!DOCTYPE r [<!ENTITY a 'aaaa'><!ENTITY b '&a;&a;&a;&a;'>]><rss>&b;</rss>"),
)


@FUZZ
@given(content=feeds)
def test_any_feed_document_parses_to_typed_entries_without_raising(content: bytes):
    parsed = parse_feed(content)
    assert all(isinstance(e.link, str | None) and isinstance(e.published, str | None) for e in parsed.entries)


@FUZZ
@given(published=dates, page=st.none() | dates, feed=st.none() | dates, http=st.none() | dates)
def test_any_dates_choose_a_day_or_reject_with_a_reason(published, page, feed, http):
    raw = RawArticle(text="x", fetched_at="2024-03-01T08:00:00Z", published=published, feed_published=feed)
    raw = raw.model_copy(update={"http_last_modified": http})
    try:
        chosen = choose_date(raw, page)
    except Rejected as exc:
        assert exc.reason in {"unparseable_date", "missing_date"}
    else:
        assert 10000101 <= chosen.day <= 99991231


@FUZZ
@given(query=st.text(max_size=80), asked=st.dates())
def test_any_query_string_yields_a_calendar_date_or_none(query: str, asked):
    found = find_date(query, asked)
    assert found is None or 1 <= found.day.year <= 9999
