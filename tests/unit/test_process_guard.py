"""The process stage's per-record guard covers every step of a record, long texts are segmented in pieces, text is
stripped of control characters, and a dead-lettered chunk lets go of its dedup signature (the extract side of that
is in tests/unit/test_outage_handling.py)."""

import pytest

from newskg.core.records import DedupRelease, DedupSignature, RawArticle, RecordError, decode_any
from newskg.core.settings import Settings
from newskg.ingest.process import sentences
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.signature_log import apply_entry
from newskg.ingest.process.stage import PROCESSING_ERROR, ProcessStage
from newskg.ingest.process.text import clean_text
from tests.support.fuzz import consumer_record

PARAGRAPH = (
    "The harbour council approved a new ferry line on Monday after a long debate. Boats will run every hour from "
    "May, the council said. Residents had asked for the service for years.\n"
)


def message(text: str, offset: int, url: str | None = None) -> bytes:
    raw = RawArticle(url=url, text=text, source="wire", fetched_at="2024-03-01T08:00:00Z", published="2024-03-01")
    return consumer_record("news.articles", raw.to_bytes(), offset)


def process_stage() -> ProcessStage:
    settings = Settings(_env_file=None)
    return ProcessStage(settings, DedupIndex(0.7, settings.dedup_num_perm, settings.dedup_window_days), None)


@pytest.fixture
def small_spacy(monkeypatch):
    """spaCy's max_length made small (the real one is 1,000,000 characters), so a long text is cheap to test."""
    nlp = sentences.sentence_pipeline()
    monkeypatch.setattr(nlp, "max_length", 20_000)
    return nlp


def test_review_finding_a_text_over_spacys_max_length_is_segmented_in_pieces_not_lost(small_spacy, monkeypatch):
    """Review finding: "a plain-text article over spaCy's `max_length` (1,000,000 characters; pages up to 5 MB are
    accepted) raises E088 and the stage exits, again on every restart". It is segmented in pieces under the
    limit: every sentence of it reaches the chunks."""
    monkeypatch.setattr(sentences, "PIECE_CHARS", 5_000)
    long_text = PARAGRAPH * 400  # ~70k characters: over the (lowered) max_length
    assert len(long_text) > small_spacy.max_length
    output = process_stage().handle([message(long_text, 1)])
    assert output.dead == () and len(output.messages) > 100
    assert sentences.PIECE_CHARS < 1_000_000 and sentences.pieces("x" * 12, 5) == ["xxxxx", "xxxxx", "xx"]


def test_review_finding_a_record_the_sentence_splitter_fails_on_is_one_dead_letter_and_the_batch_goes_on(
    small_spacy,
):
    """Review finding: `split_many` ran outside the per-article guard. With pieces bigger than max_length (as the
    real limit would be without them), spaCy refuses the long text: that record is one dead letter with a reason
    code, the others of the batch are chunked."""
    assert small_spacy.max_length < sentences.PIECE_CHARS
    output = process_stage().handle([message(PARAGRAPH * 3, 1, "https://a.test/1"), message(PARAGRAPH * 200, 2)])
    (dead,) = output.dead
    assert (dead.offset, dead.reason) == (2, PROCESSING_ERROR) and "E088" in dead.detail
    assert output.messages and all(m.record.article_id for m in output.messages)


def test_a_failure_while_chunking_leaves_nothing_in_the_dedup_index(monkeypatch):
    """Every record of an article is built before the index is told anything: a dead-lettered article leaves no
    kept signature behind (it would make later near-duplicates sightings of a chunk never sent)."""
    import newskg.ingest.process.chunk_dedup as step_module

    stage = process_stage()
    built = []

    def failing_record(article, cid, window):
        built.append(cid)
        if len(built) == 2:
            raise ValueError("the second window cannot be a chunk")
        return step_module.chunk_record.__wrapped__(article, cid, window)

    failing_record.__wrapped__ = step_module.chunk_record
    monkeypatch.setattr(step_module, "chunk_record", failing_record)
    output = stage.handle([message(PARAGRAPH * 4, 1)])
    assert [d.reason for d in output.dead] == [PROCESSING_ERROR] and output.messages == ()
    assert len(stage.index) == 0 and output.after_ack.kept == ()


def test_review_finding_nul_and_control_characters_are_stripped_at_the_process_stage():
    """Review finding: a NUL byte in a chunk became a graph_write_error in the extract stage (a NUL cuts the query
    text). Control characters (but tab and newline) and lone surrogates are removed from the text, title and
    source before any chunk is made."""
    assert clean_text("a\x00b\r\nc\x1b\x7f\ud800d\te") == "ab\ncd\te"
    # (a NUL in the first 4 KB makes the page binary: refused as such, tests/unit/test_process_logic.py)
    text = PARAGRAPH * 2 + ("pad " * 1200) + PARAGRAPH.replace("ferry", "fer\x00ry\x07") * 2 + "\x00 the end."
    raw = RawArticle(
        text=text, title="Ti\x00tle", source="wi\x00re", fetched_at="2024-03-01T08:00:00Z", published="2024-03-01"
    )
    output = process_stage().handle([consumer_record("news.articles", raw.to_bytes(), 1)])
    assert output.dead == () and output.messages
    for m in output.messages:
        assert "\\u0000" not in m.record.to_json() and "\\u0007" not in m.record.to_json()
        assert m.record.title == "Title" and m.record.source == "wire" and "\x00" not in m.record.text
        m.record.to_bytes()  # encodable


def test_a_lone_surrogate_in_an_error_detail_does_not_make_an_unsendable_dead_letter():
    raw = b'{"kind": "RawArticle", "text": "\\ud800' + b"x" * 10 + b'", "fetched_at": 5}'
    output = process_stage().handle([consumer_record("news.articles", raw, 3)])
    (dead,) = output.dead
    dead.to_bytes()


def test_review_finding_a_5000_digit_integer_is_a_record_error_not_a_plain_value_error():
    """Review finding: `_json_loads` converted only decode/Unicode/recursion errors; "a chunk message holding a
    5,000-digit integer raises a plain `ValueError` past `except RecordError`"."""
    huge = b'{"kind": "Chunk", "day": ' + b"9" * 5000 + b"}"
    for bad in (huge, b'{"kind": "Chunk", "day": 1e999}', b'{"kind": "Chunk", "day": NaN}', b'{"day": -Infinity}'):
        with pytest.raises(RecordError) as raised:
            decode_any(bad)
        assert raised.value.reason == "malformed_json"
    with pytest.raises(RecordError):
        DedupSignature.from_bytes(b'{"chunk_id": "c", "ingested_ms": 99999999999999999999}')
    output = process_stage().handle([consumer_record("news.articles", huge.replace(b"Chunk", b"RawArticle"), 4)])
    assert [d.reason for d in output.dead] == ["malformed_json"]


def test_bad_dedup_log_entries_are_skipped_on_replay_not_raised():
    index = DedupIndex(0.7, 128)
    for bad in (b'{"kind": "DedupSignature", "day": ' + b"1" * 5000 + b"}", b"\xff", b"[]"):
        assert apply_entry(index, bad) is False
    wrong = DedupSignature(chunk_id="c", article_id="a", num_perm=128, minhash="AAAA", day=20240301)
    assert apply_entry(index, wrong.to_bytes()) is False and len(index) == 0


def signature(index: DedupIndex, chunk_id: str, text: str, ingested_ms: int) -> bytes:
    return DedupSignature(
        chunk_id=chunk_id,
        article_id=f"a_{chunk_id}",
        num_perm=index.signer.num_perm,
        minhash=index.signer.encode(index.signer.sign(text)),
        day=20240301,
        ingested_ms=ingested_ms,
    ).to_bytes()


@pytest.mark.parametrize("release_first", [False, True], ids=["release-after", "release-before"])
def test_review_finding_a_released_signature_is_no_longer_a_target_for_sightings(release_first):
    """Review finding: a dead-lettered chunk must release its signature (tombstone in the dedup log). The release
    names the record that emitted the chunk, so it holds in either order in the log (the process stage logs the
    signature after its writes are acknowledged; the extract stage may dead-letter the chunk before that)."""
    index = DedupIndex(0.7, 128, window_days=30)
    kept = PARAGRAPH
    release = DedupRelease(chunk_id="c_kept", ingested_ms=5, day=20240301, reason="graph_write_error").to_bytes()
    entries = [signature(index, "c_kept", kept, 5), release]
    for entry in reversed(entries) if release_first else entries:
        apply_entry(index, entry)
    mh = index.signer.sign(kept.replace("long", "lengthy"))
    assert "c_kept" not in index and index.decide("c_new", "a_other", mh, 9).kind == "new"
    # a later record keeping the same chunk again (another ingestion instant) is not released by the old release
    apply_entry(index, signature(index, "c_kept", kept, 6))
    assert "c_kept" in index and index.decide("c_new", "a_other", mh, 9).kind == "duplicate"


@pytest.mark.parametrize("surrogate", ["\ud800", "\udbff", "\udc80", "\udfff"])
@pytest.mark.parametrize("url", [None, "https://wire.example/a"])
def test_review_finding_a_lone_surrogate_in_the_text_is_stripped_not_a_processing_error(surrogate, url):
    """Found by tests/integration/test_adversarial_corpus.py: a lone surrogate ("\\ud800" escaped in the input JSON)
    in an article's text made it a `processing_error` instead of being stripped: the binary check encoded the text
    with surrogateescape (which takes only \\udc80-\\udcff), and without a URL the content id hashed the raw text. A
    source sending such a record (`ingest files`, a JSONL line) stopped mid-run: the record had no UTF-8 form."""
    raw = RawArticle(
        url=url,
        text=PARAGRAPH.replace("ferry", f"fer{surrogate}ry"),
        fetched_at="2024-03-01T08:00:00Z",
        published="2024-03-01",
    )
    sent = raw.to_bytes()  # escaped ("\ud800"), as JSON allows: it decodes to the same record
    assert RawArticle.from_bytes(sent) == raw
    output = process_stage().handle([consumer_record("news.articles", sent, 1)])
    assert output.dead == () and output.messages
    assert all("ferry" in m.record.text for m in output.messages)
