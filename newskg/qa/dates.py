"""A date written inside a query ("Doja Cat on Aug 31 2023") becomes the query day.

Formats read (case-insensitive, English month names or their 3-letter forms, with or without a dot):
- ISO: 2023-08-31, 2023/08/31
- month first: Aug 31 2023, August 31, 2023, Aug. 31st, 2023, Sept 5 (no year)
- day first: 31 Aug 2023, 31st of August 2023, 5 Sept (no year)
- US numeric: 8/31/2023 (month/day/year; a day-first 31/8/2023 is read too, when the first number cannot be a
  month)
A date without a year takes the latest such day on or before the date the query was asked. A preceding "on",
"of", "from" or "for" (and a "the") goes with it. Anything else ("last Tuesday", "2023" alone) is not a date
here: the query keeps its words and its asked date. Neither is a date outside the years QA serves (FIRST_YEAR to
LAST_YEAR): "Jan 3 0001" stays words."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for name in names
}
# The years QA serves, in the API's date parameters and in dates read from a query: a margin of centuries inside
# datetime's 1..9999, so no shift the read paths make (retrieval's ±qa_backoff_days rings, at most 365 days; the
# explorer's 730-day timeline) can leave it and raise (review finding: date=0001-01-03 → 500).
FIRST_YEAR, LAST_YEAR = 1000, 8999
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_LEAD = r"(?:\b(?:on|of|from|for)\s+(?:the\s+)?)?"
PATTERNS = [
    re.compile(_LEAD + r"\b(?P<year>\d{4})[-/](?P<mnum>\d{1,2})[-/](?P<day>\d{1,2})\b", re.I),
    re.compile(_LEAD + r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4})\b", re.I),
    re.compile(_LEAD + r"\b" + _MONTH + r"\s+" + _DAY + r"\b(?:,?\s+" + _YEAR + r"\b)?", re.I),
    re.compile(_LEAD + r"\b" + _DAY + r"\s+(?:of\s+)?" + _MONTH + r"(?:,?\s+" + _YEAR + r"\b)?", re.I),
]


@dataclass(frozen=True)
class DateInQuery:
    day: dt.date
    rest: str  # the query without the date phrase


def find_date(query: str, asked: dt.date) -> DateInQuery | None:
    """The first date the query states (see the module's formats), or None."""
    for pattern in PATTERNS:
        for match in pattern.finditer(query):
            day = _date(match.groupdict(), asked)
            if day is not None:
                rest = re.sub(r"\s+", " ", query[: match.start()] + " " + query[match.end() :]).strip(" ,")
                return DateInQuery(day, rest)
    return None


def _date(found: dict[str, str | None], asked: dt.date) -> dt.date | None:
    parts = {name: value for name, value in found.items() if value}
    year = int(parts["year"]) if "year" in parts else None
    if "a" in parts and "b" in parts:  # m/d/Y, or d/m/Y when the first cannot be a month
        first, second = int(parts["a"]), int(parts["b"])
        month, day = (first, second) if first <= 12 else (second, first)
    else:
        month = int(parts["mnum"]) if "mnum" in parts else MONTHS[parts["month"].lower()]
        day = int(parts["day"])
    if year is not None:
        return _valid(year, month, day)
    this_year = _valid(asked.year, month, day)
    if this_year is not None and this_year <= asked:
        return this_year
    return _valid(asked.year - 1, month, day)


def _valid(year: int, month: int, day: int) -> dt.date | None:
    if not FIRST_YEAR <= year <= LAST_YEAR:
        return None
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None
