"""The HTTP contract every route shares (the QA API and the explorer): one 4xx body, its reason codes, and date
parameters documented as what the server accepts."""

from __future__ import annotations

from typing import Any

from fastapi import Query
from pydantic import BaseModel

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"


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
    return Query(alias=alias, description=description, pattern=DATE_PATTERN, json_schema_extra={"format": "date"})
