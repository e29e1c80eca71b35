"""RawArticle → Article: main text, metadata, the chosen date, content-derived ids."""

from __future__ import annotations

from urllib.parse import urlsplit

from newskg.core.ids import article_id, source_id
from newskg.core.records import Article, RawArticle
from newskg.core.timeaxes import epoch_ms, iso
from newskg.ingest.process.dates import choose_date
from newskg.ingest.process.language import detect_language
from newskg.ingest.process.text import clean_text, extract_page


def raw_article_id(raw: RawArticle) -> str:
    """The id producers key messages by and the stage gives the article: canonical URL, else content hash."""
    return article_id(raw.url, raw.html or raw.text)


def source_name(raw: RawArticle, url: str | None) -> str:
    if raw.source and raw.source != "unknown":
        return clean_text(raw.source) or "unknown"
    host = urlsplit(url).hostname if url else None
    return (host[4:] if host and host.startswith("www.") else host) or "unknown"


def build_article(raw: RawArticle) -> Article:
    page = extract_page(raw)
    date = choose_date(raw, page.date)
    url = raw.url or page.url
    source = source_name(raw, url)
    # A backfilled (historical) article counts as taken in when it was published, so the graph "as of" any past
    # day shows what a live system would have had then; live input keeps the instant its source fetched it.
    ingested = date.instant if raw.backfill else raw.fetched_at
    return Article(
        id=raw_article_id(raw),
        url=url,
        title=page.title,
        author=page.author,
        text=page.text,
        published=date.instant,
        published_day=date.day,
        date_origin=date.origin,
        source=source,
        source_id=source_id(source),
        lang=detect_language(page.text, page.lang),
        ingested_at=iso(ingested),
        ingested_ms=epoch_ms(ingested),
    )
