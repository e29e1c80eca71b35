"""The page sets the fact-precision evaluation reads, as raw articles: the 91 real pages the rules were tuned on
("news"), the 15 real pages no rule was tuned on ("fresh"), and the synthetic NeoQA stream ("synthetic")."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from newskg.core.records import RawArticle

SHARED_DATA = Path(__file__).resolve().parents[4] / "shared" / "data"
FETCHED_AT = "2026-11-01T00:00:00Z"  # the pages carry no fetch instant: one for all, so every run is the same
FALLBACK_DATE = "2020-01-01"  # a page without a date of its own


class Corpus(StrEnum):
    NEWS = "news"  # the shared news-html folder: 91 real pages with gold bodies (development data)
    FRESH = "fresh"  # the shared news-html-fresh folder: 15 real pages, the untouched sample
    SYNTHETIC = "synthetic"  # the NeoQA fictional-timeline stream (evaluation/neoqa), seeded


@dataclass(frozen=True)
class Page:
    corpus: Corpus
    key: str  # the page's name in its folder (or the synthetic article's id)
    raw: RawArticle
    lang: str | None = None  # the language its own metadata states, when it states one


def _gunzip(path: Path) -> str:
    return gzip.decompress(path.read_bytes()).decode("utf-8", "replace")


def news_pages(folder: Path) -> Iterator[Page]:
    gold = json.loads((folder / "ground-truth.json").read_text())
    for key in sorted(gold):
        raw = RawArticle(
            html=_gunzip(folder / f"{key}.html.gz"),
            url=gold[key].get("url"),
            fetched_at=FETCHED_AT,
            fallback_date=FALLBACK_DATE,
            source="news-html",
        )
        yield Page(Corpus.NEWS, key, raw)


def fresh_pages(folder: Path) -> Iterator[Page]:
    for path in sorted(folder.glob("*.html.gz")):
        key = path.name.removesuffix(".html.gz")
        meta_path = folder / f"{key}.metadata.json"
        meta: dict[str, Any] = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        raw = RawArticle(
            html=_gunzip(path),
            fetched_at=FETCHED_AT,
            fallback_date=FALLBACK_DATE,
            published=meta.get("publishedTime") or None,
            source=f"fresh-{key.split('-')[0]}",
        )
        yield Page(Corpus.FRESH, key, raw, meta.get("lang"))


def synthetic_pages(timelines: int, seed: int) -> Iterator[Page]:
    from newskg.evaluation.neoqa.generate import generate, raw_article

    for article in generate(timelines, seed).articles:
        yield Page(Corpus.SYNTHETIC, article.article_id, raw_article(article, FETCHED_AT), "en")


def load(corpus: Corpus, data: Path = SHARED_DATA, timelines: int = 3, seed: int = 0) -> list[Page]:
    if corpus is Corpus.NEWS:
        return list(news_pages(data / "news-html"))
    if corpus is Corpus.FRESH:
        return list(fresh_pages(data / "news-html-fresh"))
    return list(synthetic_pages(timelines, seed))
