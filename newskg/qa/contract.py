"""The HTTP contract every route shares (the QA API and the explorer): one 4xx body, its reason codes, and date
and text parameters documented as what the server accepts (dates in the served years, text without control
characters), refused with a 422 before any of them reaches a store or date arithmetic."""

from __future__ import annotations

import re
from typing import Any

from fastapi import HTTPException, Query
from pydantic import BaseModel

from newskg.core.timeaxes import day_key
from newskg.qa.dates import FIRST_YEAR, LAST_YEAR

# YYYY-MM-DD in the years QA serves (qa/dates.py: FIRST_YEAR 1000 to LAST_YEAR 8999): in the pattern, so the
# schema says it and FastAPI refuses the rest before any date arithmetic.
DATE_PATTERN = r"^[1-8]\d{3}-\d{2}-\d{2}$"
DATE_RANGE = f"{FIRST_YEAR:04d}-01-01 to {LAST_YEAR:04d}-12-31"
# One-line text (a query, a name, an id): no C0 control character and no DEL. A NUL ends FalkorDB's query text
# (its client inlines parameters: review finding q=%00 → 500); tabs and line breaks have no place in a search box
# or an id either, and the other C0 codes are invisible in logs. Printable Unicode, C1 included, passes.
TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"
# Multi-line text (the Cypher console's statement and its parameter values): tab, LF and CR allowed, no other C0
# control and no DEL.
PROGRAM_PATTERN = r"^[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f]*$"
DATE = re.compile(DATE_PATTERN)
# What each pattern means, for the 422's detail (pydantic would quote the regex).
PATTERN_WORDS = {
    DATE_PATTERN: f"a date YYYY-MM-DD from {DATE_RANGE}",
    TEXT_PATTERN: "text without control characters (U+0000-U+001F, U+007F)",
    PROGRAM_PATTERN: "text without control characters other than tab, LF and CR",
}


class ErrorBody(BaseModel):
    """Every 4xx body, in the shape of `core.errors.NewskgError`: a stable reason code and a message saying why."""

    reason: str
    detail: str


# The reason code of each 4xx the API answers (`ErrorBody.reason`).
REASONS = {
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    422: "invalid_parameter",
}
# The reason codes of a 503 from /readyz (its body carries `reason` and `detail` like `ErrorBody`).
WARMING = "warming"  # the models and connections are still loading (qa/warmup.py)
WARMUP_FAILED = "warmup_failed"  # a warm-up step failed and is being retried (a server still starting)
NOT_READY = "not_ready"  # a dependency check failed (broker, graph, mirror, stages)
ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "missing or unknown API key (only when keys are configured)"},
    422: {"model": ErrorBody, "description": "a parameter the API does not accept, and why"},
}


def date_query(description: str, alias: str | None = None) -> Any:
    """A YYYY-MM-DD query parameter, documented as what the server accepts: a calendar date (format `date`) in
    that pattern (a string that matches but is no calendar date, like 2023-02-30, is still a 422)."""
    return Query(
        alias=alias,
        description=f"{description}; from {DATE_RANGE}",
        pattern=DATE_PATTERN,
        json_schema_extra={"format": "date"},
    )


def text_query(description: str | None = None, max_length: int | None = None, alias: str | None = None) -> Any:
    """A one-line text query parameter: at least one character, no control character (`TEXT_PATTERN`)."""
    return Query(alias=alias, description=description, min_length=1, max_length=max_length, pattern=TEXT_PATTERN)


def parse_day(value: str, name: str) -> int:
    """A date parameter's day key, or a 422 naming the parameter: also for a caller whose parameter skipped the
    pattern (a request body, a value built in code), so no day outside the served years reaches the read paths."""
    if not DATE.match(value):
        raise HTTPException(422, f"{name} must be {PATTERN_WORDS[DATE_PATTERN]}, not {value!r}")
    try:
        return day_key(value)
    except ValueError as exc:
        raise HTTPException(422, f"{name} {value!r} is not a calendar date") from exc
