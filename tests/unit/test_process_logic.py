"""Pure logic of the process stage: windows, dates, guards, dedup decisions, text extraction, file reading."""

import gzip
import json
from pathlib import Path

import pytest

from newskg.core.records import RawArticle
from newskg.ingest.process.article import build_article, raw_article_id
from newskg.ingest.process.chunking import windows
from newskg.ingest.process.dates import choose_date
from newskg.ingest.process.dedup import DedupIndex, exact_jaccard, shingles
from newskg.ingest.process.guards import Rejected, check_size, looks_binary
from newskg.ingest.process.quality import token_f1
from newskg.ingest.process.sentences import split_sentences
from newskg.ingest.sources.files import read_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "news-html"
NOW = "2023-09-01T08:00:00Z"


def raw(**kw) -> RawArticle:
    return RawArticle(**({"text": "x" * 50, "fetched_at": NOW} | kw))


@pytest.mark.parametrize(
    ("n", "size", "stride", "expected"),
    [
        (0, 5, 3, []),
        (3, 5, 3, [(0, 3)]),
        (5, 5, 3, [(0, 5)]),
        (9, 5, 3, [(0, 5), (3, 8), (4, 9)]),
        (11, 5, 3, [(0, 5), (3, 8), (6, 11)]),
        (6, 2, 2, [(0, 2), (2, 4), (4, 6)]),
    ],
)
def test_windows_cover_every_sentence_with_overlap(n, size, stride, expected):
    sentences = [f"S{i}." for i in range(n)]
    got = windows(sentences, size, stride)
    assert [(w.start, w.end) for w in got] == expected
    assert {i for w in got for i in range(w.start, w.end)} == set(range(n))
    assert all(w.sentences == sentences[w.start : w.end] for w in got)


def test_date_order_given_page_feed_http_cli():
    full = raw(
        published="2023-08-31T23:30:00-05:00",
        feed_published="2023-01-02",
        http_last_modified="Tue, 03 Jan 2023 10:00:00 GMT",
        fallback_date="2023-01-04",
    )
    assert choose_date(full, "2023-01-01").origin == "given"
    assert choose_date(full, "2023-01-01").day == 20230901  # normalised to UTC
    assert choose_date(raw(feed_published="2023-01-02"), "2023-01-01").origin == "page"
    assert choose_date(raw(feed_published="2023-01-02"), None).day == 20230102
    assert choose_date(raw(http_last_modified="Tue, 03 Jan 2023 10:00:00 GMT"), "garbage").day == 20230103
    assert choose_date(raw(fallback_date="2023-01-04"), None).origin == "cli"


def test_explicit_dates_must_parse_and_some_date_must_exist():
    with pytest.raises(Rejected) as bad:
        choose_date(raw(published="the day after tomorrow-ish"), "2023-01-01")
    assert bad.value.reason == "unparseable_date"
    with pytest.raises(Rejected) as none:
        choose_date(raw(), None)
    assert none.value.reason == "missing_date"


def test_guards():
    assert looks_binary(b"%PDF-1.7 ...") and looks_binary(b"abc\x00def") and looks_binary(bytes(range(32)) * 10)
    assert not looks_binary("<html><body>Ünïcode news — fine\n\ttext</body></html>".encode())
    check_size(b"x" * 10, 10)
    with pytest.raises(Rejected, match="too_large"):
        check_size(b"x" * 11, 10)


def test_shingles_and_exact_jaccard():
    assert shingles("A b c d") == {b"a b c", b"b c d"}
    assert shingles("two words") == {b"two words"}
    assert exact_jaccard("a b c d", "a b c d") == 1.0
    assert exact_jaccard("a b c d", "a b c x") == pytest.approx(1 / 3)


TEXT = (
    "Doja Cat arrived at the Paris show on Thursday night wearing a striking red outfit. The singer then posed "
    "for photographers outside the venue with her manager and several friends. Fans gathered along the street "
    "for hours hoping to catch a glimpse of the star before the show began. The designer later praised her "
    "choice of outfit in a short statement to reporters."
)


def test_dedup_decisions():
    index = DedupIndex(threshold=0.7, num_perm=128)
    mh = index.signer.sign(TEXT)
    assert index.decide("c1", "a1", mh).kind == "new"
    index.add("c1", "a1", mh)
    assert index.decide("c1", "a1", mh).kind == "again"  # the same article again: nothing new
    same_text_other_article = index.decide("c1", "a2", mh)
    assert (same_text_other_article.kind, same_text_other_article.chunk_id) == ("duplicate", "c1")
    edited = TEXT.replace("Thursday", "Friday").replace("several", "a few")
    assert exact_jaccard(TEXT, edited) >= 0.7
    near = index.decide("c2", "a2", index.signer.sign(edited))
    assert near.kind == "duplicate" and near.chunk_id == "c1" and near.similarity >= 0.7
    other = "The central bank raised interest rates by a quarter point, citing persistent inflation pressures."
    assert index.decide("c3", "a2", index.signer.sign(other)).kind == "new"
    own_overlap = index.decide("c4", "a1", index.signer.sign(edited))  # near its own chunk: not a duplicate
    assert own_overlap.kind == "new"


def test_signatures_round_trip_through_the_log_encoding():
    index = DedupIndex(0.7, 64)
    mh = index.signer.sign(TEXT)
    assert index.signer.decode(index.signer.encode(mh)).jaccard(mh) == 1.0


def test_sentences_split_and_never_cross_paragraphs():
    sentences = split_sentences("Doja Cat arrived. She smiled at fans.\nA new paragraph starts here without a stop")
    assert sentences == ["Doja Cat arrived.", "She smiled at fans.", "A new paragraph starts here without a stop"]


def test_real_page_main_text_and_metadata():
    gold = json.loads((FIXTURES / "ground-truth.json").read_text())
    scores = []
    for key, entry in gold.items():
        html = gzip.decompress((FIXTURES / f"{key}.html.gz").read_bytes()).decode("utf-8", "replace")
        article = build_article(RawArticle(html=html, fetched_at=NOW, fallback_date="2020-01-01"))
        scores.append(token_f1(article.text, entry["articleBody"]))
        assert article.published_day >= 19900101 and article.source != "unknown"
    assert sum(scores) / len(scores) >= 0.85


def test_empty_page_is_rejected():
    with pytest.raises(Rejected) as exc:
        build_article(
            RawArticle(html="<html><body><nav>Home</nav></body></html>", fetched_at=NOW, fallback_date="2023-01-01")
        )
    assert exc.value.reason == "empty_extraction"


def test_file_reading(tmp_path):
    (tmp_path / "a.txt").write_text("Plain text article about the Paris show and its famous guests.")
    (tmp_path / "b.jsonl").write_text(
        json.dumps(
            {"url": "https://ex.com/1?utm_source=x", "text": "T" * 60, "published": "2023-08-31", "source": "ex"}
        )
        + "\n{broken\n"
    )
    (tmp_path / "c.html").write_bytes(b"%PDF-1.4 binary \x00\x01")
    items = [i for p in sorted(tmp_path.iterdir()) for i in read_file(p, "cli-src", "2023-08-01T00:00:00Z", NOW)]
    assert [type(i.value).__name__ for i in items] == ["RawArticle", "RawArticle", "bytes", "bytes"]
    assert items[0].value.source == "cli-src" and items[0].value.fallback_date == "2023-08-01T00:00:00Z"
    assert items[1].value.source == "ex" and items[1].key == raw_article_id(items[1].value)
    assert items[1].key == raw_article_id(RawArticle(url="https://ex.com/1", text="other", fetched_at=NOW))
    assert items[2].origin.endswith("b.jsonl:2")


def test_token_f1():
    assert token_f1("a b c", "a b c") == 1.0
    assert token_f1("", "a") == 0.0
    assert token_f1("a b", "a b c d") == pytest.approx(2 * 1 * 0.5 / 1.5)
