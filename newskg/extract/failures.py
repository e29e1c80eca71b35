"""What a failure in the extract stage means, as core/failures.py classifies it.

An outage (the graph, the broker, the vector store or the LLM endpoint out of reach, restarting, overloaded or
refusing writes for now) and a stop (credentials refused, the LLM call budget spent) propagate out of every
per-chunk guard: nothing is committed, and the runner holds the batch (outage) or the stage ends (stop).
Everything else raised while extracting or writing one message is that message's problem: it goes to the
dead-letter topic with a reason code and the stage goes on.
"""

from __future__ import annotations

from newskg.core.failures import must_stop, outage

__all__ = ["EXTRACTION_ERROR", "describe", "must_stop", "outage"]

EXTRACTION_ERROR = "extraction_error"


def describe(exc: BaseException) -> str:
    """The dead letter's detail: the exception type and its message."""
    return f"{type(exc).__name__}: {exc}"
