"""RSS/Atom feeds: conditional GET of the feed, each new entry's page fetched politely and produced as a
RawArticle (with the entry date and the page's Last-Modified as date fallbacks); URLs already sent are skipped
across restarts. An entry refused on purpose (robots.txt of any host on its redirect chain, a private or
otherwise non-public target, too many redirects, too large), whose link does not parse (`http://h:abc/`) or whose
page is empty goes to the dead-letter topic with that reason and is remembered, so the next poll neither sends it
again nor stops at it; a refused feed URL is reported as an error."""

from __future__ import annotations

import calendar
import datetime as dt
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import cast
from urllib.parse import urlsplit

import feedparser  # pyright: ignore[reportMissingTypeStubs] - untyped: read only through parse_feed
import httpx

from newskg.core.records import RawArticle
from newskg.core.timeaxes import iso, utc_now
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.process.article import raw_article_id
from newskg.ingest.sources.feed_state import FeedState
from newskg.ingest.sources.http import FetchRefused, PoliteFetcher
from newskg.ingest.sources.rejects import SourceRejected, source_dead_letter

log = logging.getLogger(__name__)


@dataclass
class FeedReport:
    feed: str
    status: str = "ok"  # ok | not_modified | error
    entries: int = 0
    sent: int = 0
    already_seen: int = 0
    robots_disallowed: int = 0
    refused_target: int = 0
    dead_letters: int = 0
    errors: list[str] = field(default_factory=list[str])


@dataclass(frozen=True)
class FeedEntry:
    link: str | None
    title: str | None
    published: str | None  # ISO UTC: the entry's published date, else its updated date


@dataclass(frozen=True)
class ParsedFeed:
    title: str | None
    entries: list[FeedEntry]


def parse_feed(content: bytes) -> ParsedFeed:
    """feedparser's result (untyped dicts) read into typed records, here and nowhere else."""
    parsed = cast(Mapping[str, object], feedparser.parse(content))  # pyright: ignore[reportUnknownMemberType]
    feed = _mapping(parsed.get("feed"))
    raw_entries = parsed.get("entries")
    entries = cast(list[object], raw_entries) if isinstance(raw_entries, list) else []
    return ParsedFeed(_text(feed.get("title")), [_feed_entry(_mapping(e)) for e in entries])


def _feed_entry(entry: Mapping[str, object]) -> FeedEntry:
    return FeedEntry(_text(entry.get("link")), _text(entry.get("title")), _entry_date(entry))


def _mapping(value: object) -> Mapping[str, object]:
    return cast(Mapping[str, object], value) if isinstance(value, Mapping) else {}


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _entry_date(entry: Mapping[str, object]) -> str | None:
    """feedparser gives entry dates as UTC struct_time."""
    parsed = entry.get("published_parsed") or entry.get("updated_parsed")
    if not isinstance(parsed, time.struct_time):
        return None
    return iso(dt.datetime.fromtimestamp(calendar.timegm(parsed), tz=dt.UTC))


class FeedPoller:
    def __init__(
        self, fetcher: PoliteFetcher, state: FeedState, producer: RecordProducer, articles_topic: str, dlq_topic: str
    ):
        self.fetcher = fetcher
        self.state = state
        self.producer = producer
        self.articles_topic = articles_topic
        self.dlq_topic = dlq_topic

    def poll(self, feed_url: str) -> FeedReport:
        report = FeedReport(feed_url)
        etag, modified = self.state.validators(feed_url)
        try:
            result = self.fetcher.fetch(feed_url, etag=etag, last_modified=modified)
        except (httpx.HTTPError, FetchRefused) as exc:
            report.status = "error"
            report.errors.append(f"{feed_url}: {exc}")
            return report
        if result.not_modified:
            report.status = "not_modified"
            return report
        parsed = parse_feed(result.content)
        source = parsed.title or urlsplit(feed_url).hostname or "feed"
        for entry in parsed.entries:
            report.entries += 1
            self._entry(entry, source, report)
        self.state.save_validators(feed_url, result.etag, result.last_modified)
        return report

    def _entry(self, entry: FeedEntry, source: str, report: FeedReport) -> None:
        link = entry.link
        if not link:
            return
        if self.state.seen(link):
            report.already_seen += 1
            return
        try:
            raw = self._page(link, entry, source)
        except SourceRejected as exc:  # refused, unusable or empty: one dead letter, and never tried again
            report.robots_disallowed += exc.reason == "robots_disallowed"
            report.refused_target += exc.reason == "refused_target"
            self.producer.send_all(self.dlq_topic, [(link, source_dead_letter("feeds", link, exc))])
            report.dead_letters += 1
            self.state.mark_seen(link, exc.reason)
            return
        except httpx.HTTPError as exc:  # transient or missing: tried again at the next poll
            report.errors.append(f"{link}: {exc}")
            return
        self.producer.send_all(self.articles_topic, [(raw_article_id(raw), raw)])
        self.state.mark_seen(link, "sent")
        report.sent += 1

    def _page(self, link: str, entry: FeedEntry, source: str) -> RawArticle:
        page = self.fetcher.fetch(link)
        html = page.text()
        if not html:  # a 200 or 204 with nothing in it: no article, now or at the next poll
            raise SourceRejected("empty_page", f"{link}: HTTP {page.status} with an empty body")
        return RawArticle(
            url=page.url,
            html=html,
            source=source,
            fetched_at=iso(utc_now()),
            feed_published=entry.published,
            http_last_modified=page.last_modified,
            title=entry.title,
        )
