"""Pick an article's publication date: the first usable one in a fixed order, normalised to UTC."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from newskg.core.records import RawArticle
from newskg.core.timeaxes import day_key, iso, parse_instant
from newskg.ingest.process.guards import Rejected

# Origin names match Article.date_origin. A date the user gave explicitly (JSONL `published`, `--date`) must
# parse: a typo there is rejected, never silently replaced. Dates found on the page or in feeds are best-effort.
DateOrigin = Literal["given", "page", "feed", "http", "cli"]  # the type checker holds it to Article.date_origin
ORDER: tuple[DateOrigin, ...] = ("given", "page", "feed", "http", "cli")
EXPLICIT: frozenset[DateOrigin] = frozenset({"given", "cli"})


@dataclass(frozen=True)
class ChosenDate:
    instant: str  # ISO UTC
    day: int
    origin: DateOrigin


def candidates(raw: RawArticle, page_date: str | None) -> dict[DateOrigin, str | None]:
    return {
        "given": raw.published,
        "page": page_date,
        "feed": raw.feed_published,
        "http": raw.http_last_modified,
        "cli": raw.fallback_date,
    }


def choose_date(raw: RawArticle, page_date: str | None) -> ChosenDate:
    found = candidates(raw, page_date)
    for origin in ORDER:
        value = found[origin]
        if not value:
            continue
        try:
            instant = parse_instant(value)
        except (ValueError, TypeError, OverflowError) as exc:
            if origin in EXPLICIT:
                raise Rejected("unparseable_date", f"{origin} date {value!r}: {exc}") from exc
            continue
        if not 1000 <= instant.year <= 9999:
            continue
        return ChosenDate(iso(instant), day_key(instant), origin)
    raise Rejected("missing_date", "no usable date on the page, in the feed or HTTP headers, and no --date given")
