"""The event day of a sentence: an explicit day-level date it states (spaCy DATE), read relative to the
publication day ("on Monday" → the Monday before publication; "on Friday" after "will" → the next one);
otherwise the publication day."""

from __future__ import annotations

import datetime as dt
import re
from functools import lru_cache

import dateparser
from spacy.tokens import Span

from newskg.core.timeaxes import day_from_key, day_key

DAY_LEVEL = re.compile(
    r"\b(yesterday|today|tonight|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"\d+\s+days?\s+ago|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|"
    r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b|"
    r"\d{1,2}(st|nd|rd|th)?\s+(of\s+)?(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec))",
    re.I,
)
FUTURE_CUES = re.compile(r"\b(will|next|upcoming|tomorrow|scheduled|plans? to)\b", re.I)
MAX_DISTANCE = dt.timedelta(days=3650)


@lru_cache(maxsize=4096)  # dateparser costs ~10 ms a call; a sentence's date is parsed for each of its interactions
def parse_day(text: str, published_day: int, future: bool = False) -> int | None:
    """A day-level date expression → yyyymmdd, or None when the text is not one (a year, 'last month')."""
    if not DAY_LEVEL.search(text):
        return None
    base = dt.datetime.combine(day_from_key(published_day), dt.time(12, 0))
    if base.strftime("%A").lower() in text.lower() and not re.search(r"\b(last|next)\b", text, re.I):
        return published_day  # "on Friday" in a Friday paper is that day, not a week earlier
    parsed = dateparser.parse(
        text,
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "future" if future else "past",
            "RETURN_AS_TIMEZONE_AWARE": False,
            "PREFER_DAY_OF_MONTH": "first",
        },
    )
    if parsed is None or abs(parsed - base) > MAX_DISTANCE:
        return None
    return day_key(parsed.date())


def sentence_day(sentence: Span, published_day: int) -> tuple[int, str]:
    """(day, origin): the first day-level DATE in the sentence, else the publication day."""
    future = bool(FUTURE_CUES.search(sentence.text))
    for ent in sentence.ents:
        if ent.label_ == "DATE":
            day = parse_day(ent.text, published_day, future)
            if day:
                return day, f"stated: {ent.text!r}"
    return published_day, "publication day"
