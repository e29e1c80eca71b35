"""The one place that decides what a failure in the extract stage means.

Infrastructure failures (the graph, the broker, the vector store or the LLM endpoint unreachable, timing out or
overloaded, after the clients' own retries) stop the step: nothing is committed and the batch is read again once
the service is back. Everything else raised while extracting one message is that message's problem: it goes to
the dead-letter topic with a reason code and the stage goes on. The LLM call budget is neither: it is a clean stop.
"""

from __future__ import annotations

import httpx
import neo4j.exceptions
import openai
import redis.exceptions
from qdrant_client.http.exceptions import ResponseHandlingException

from core.llm.client import BudgetExceeded
from ingest.kafka.client import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError
from ingest.kafka.producer import PRODUCER_STATE_LOST

INFRASTRUCTURE: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,  # builtin socket-level failures
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,  # FalkorDB over RESP (BusyLoading included)
    neo4j.exceptions.ServiceUnavailable,
    neo4j.exceptions.SessionExpired,
    neo4j.exceptions.TransientError,
    KafkaConnectionError,
    KafkaTimeoutError,
    NodeNotReadyError,
    *PRODUCER_STATE_LOST,  # the broker restarted without the producer's state: the runner rebuilds the producer
    ResponseHandlingException,
    httpx.TransportError,  # a Qdrant server out of reach
    openai.APIConnectionError,
    openai.APITimeoutError,
    openai.RateLimitError,
    openai.InternalServerError,
)

EXTRACTION_ERROR = "extraction_error"


def must_stop(exc: BaseException) -> bool:
    """True: let it propagate (no commit, retried later); False: dead-letter the message and go on."""
    return isinstance(exc, (*INFRASTRUCTURE, BudgetExceeded)) or not isinstance(exc, Exception)


def outage(exc: BaseException) -> bool:
    """A service out of reach: the runner holds the batch, uncommitted, and retries it with backoff."""
    return isinstance(exc, INFRASTRUCTURE)


def describe(exc: BaseException) -> str:
    """The dead letter's detail: the exception type and its message."""
    return f"{type(exc).__name__}: {exc}"
