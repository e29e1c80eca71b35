"""Day keys and instants: the three time axes are stored as `yyyymmdd` ints, epoch millis and ISO strings,
never as database temporal types (FalkorDB and Neo4j disagree on those)."""

from __future__ import annotations

import datetime as dt
from functools import lru_cache

import pendulum

DAYS_CACHED = 4096  # days remembered by the day functions below: eleven years of them


def parse_instant(value: str | dt.datetime | dt.date) -> pendulum.DateTime:
    """Any ISO-ish date or datetime, as a UTC instant. A date alone is midnight UTC; naive times are UTC."""
    if isinstance(value, dt.datetime):
        parsed = pendulum.instance(value if value.tzinfo else value.replace(tzinfo=dt.UTC))
    elif isinstance(value, dt.date):
        parsed = pendulum.datetime(value.year, value.month, value.day, tz="UTC")
    else:
        parsed = pendulum.parse(value.strip(), strict=False, tz="UTC")
        if not isinstance(parsed, pendulum.DateTime):
            if isinstance(parsed, pendulum.Date):
                parsed = pendulum.datetime(parsed.year, parsed.month, parsed.day, tz="UTC")
            else:
                raise ValueError(f"not a date or datetime: {value!r}")
    return parsed.in_timezone("UTC")


def day_key(value: str | dt.datetime | dt.date) -> int:
    """`yyyymmdd` integer of the UTC day."""
    if type(value) is dt.date:  # a calendar day is its own key: no instant to build (a window's every day asks)
        return value.year * 10000 + value.month * 100 + value.day
    instant = parse_instant(value)
    return instant.year * 10000 + instant.month * 100 + instant.day


def day_iso(key: int) -> str:
    return f"{key // 10000:04d}-{key // 100 % 100:02d}-{key % 100:02d}"


def day_from_key(key: int) -> dt.date:
    return dt.date(key // 10000, key // 100 % 100, key % 100)


def shift_day(day: int, days: int) -> int:
    """The yyyymmdd key `days` after `day` (before it when negative), across month and year ends."""
    return day_key(day_from_key(day) + dt.timedelta(days=days))


def utc_now() -> pendulum.DateTime:
    return pendulum.now("UTC")


def epoch_ms(value: str | dt.datetime) -> int:
    return int(parse_instant(value).timestamp() * 1000)


def iso(value: str | dt.datetime | dt.date) -> str:
    """ISO-8601 UTC string with a Z."""
    return parse_instant(value).format("YYYY-MM-DD[T]HH:mm:ss[Z]")


# Every as-of check asks it (the resolver once per name key): a calendar computation each time otherwise. Bounded:
# a client's date reaches it, and there are millions of valid days.
@lru_cache(maxsize=DAYS_CACHED)
def end_of_day_ms(key: int) -> int:
    """The last millisecond of a yyyymmdd day (UTC): the "ingested by the end of D" bound of as-of reads."""
    if key >= 99991231:
        return 2**62
    start = pendulum.datetime(key // 10000, key // 100 % 100, key % 100, tz="UTC")
    return int(start.add(days=1).timestamp() * 1000) - 1


@lru_cache(maxsize=DAYS_CACHED)  # an answer spells its days, mostly the same few: a calendar format each otherwise
def day_words(day: int) -> str:
    """A day key as prompts and answers spell it: "March 5, 2024"."""
    return pendulum.date(day // 10000, day // 100 % 100, day % 100).format("MMMM D, YYYY")
