"""The one failure classifier: what an exception means for a stage, whichever server or input it came from.

- OUTAGE: a server out of reach, restarting, overloaded or refusing writes for now (the broker, FalkorDB/redis,
  Neo4j, Qdrant, the LLM endpoint), after its client's own retries. The stage holds the batch: nothing is
  committed, nothing is dead-lettered, the batch is tried again with backoff until the server is back.
- STOP: nothing a retry or a dead letter mends: credentials refused (401/403, AUTH/NOPERM), a collection, database
  or model that does not exist, an error of ours that says it must stop (`NewskgError.STOPS`: the LLM call
  budget), the process told to end (KeyboardInterrupt, SystemExit) or out of memory. The stage stops loudly,
  commits nothing and dead-letters nothing: the data is fine, the deployment is not.
- POISON: anything else. Raised while handling one record (inside a stage's per-record guard), it is that
  record's problem: one dead letter with a reason code, and the stage goes on. Raised outside any per-record guard
  it is a bug: the runner lets it propagate (only an OUTAGE is waited out there).

Every stage runner, every per-record guard (extract/failures.py `must_stop`) and the CLI's one-line error
(newskg/cli/app.py) ask this module. It imports no client library: an exception of a library's class can only
exist once that library is loaded, so each rule looks the classes up in `sys.modules` (a process that never
imported qdrant_client or openai does not pay their half-second import to classify a broker error).
"""

from __future__ import annotations

import errno
import socket
import sys
from dataclasses import dataclass
from enum import Enum

from newskg.core.errors import NewskgError


class Failure(Enum):
    OUTAGE = "outage"
    STOP = "stop"
    POISON = "poison"


class Server(Enum):
    """Which server an outage or a refusal came from (for the message that names it)."""

    BROKER = "the Kafka broker"
    GRAPH = "the graph server"
    VECTOR = "the vector store"
    LLM = "the LLM endpoint"


@dataclass(frozen=True)
class Verdict:
    failure: Failure
    server: Server | None = None  # None: not from a known client (a bare socket error, our own code, the input)
    why: str = ""  # what decided it, e.g. "HTTP 503", "READONLY"


POISON = Verdict(Failure.POISON)
# redis-py maps these reply prefixes to classes (ReadOnlyError, OutOfMemoryError, ...) at the top level; an error
# inside a reply (FalkorDB's run-time errors, a pipeline) keeps the prefix in its message: both are read.
REDIS_OUTAGE_PREFIXES = ("READONLY", "OOM", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "BUSY")
REDIS_STOP_PREFIXES = ("NOAUTH", "NOPERM", "WRONGPASS")
# An LLM endpoint's error naming the response format (core/llm/client.py `refused_format`; llama-cpp-python's
# server answers its own validation errors with a 500 that names it).
REFUSED_FORMAT_WORDS = ("response_format", "json_schema", "schema")
# The errno of a network failure that is an OSError but no ConnectionError (no route, the name not resolving yet).
NETWORK_ERRNOS = {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTDOWN, errno.ETIMEDOUT}


def classify(exc: BaseException) -> Verdict:
    """What `exc` means for a stage (see the module docstring). An exception of no known kind that was raised
    `from` another (`raise X from Y`) is judged by its cause: a wrapper does not hide an outage."""
    if not isinstance(exc, Exception) or isinstance(exc, MemoryError):
        return Verdict(Failure.STOP, why=type(exc).__name__)
    if isinstance(exc, NewskgError):
        return Verdict(Failure.STOP, why=exc.reason) if exc.STOPS else POISON
    for rule in (_kafka, _redis, _neo4j, _qdrant, _openai, _httpx, _builtin):
        verdict = rule(exc)
        if verdict is not None:
            return verdict
    cause = exc.__cause__
    return classify(cause) if cause is not None and cause is not exc else POISON


def outage(exc: BaseException) -> bool:
    """A server out of reach: hold the batch, uncommitted, and retry with backoff."""
    return classify(exc).failure is Failure.OUTAGE


def must_stop(exc: BaseException) -> bool:
    """Must propagate out of a per-record guard (an outage to wait out, or a stop); False: dead-letter the record."""
    return classify(exc).failure is not Failure.POISON


def _classes(module: str, *names: str) -> tuple[type[BaseException], ...]:
    """The named exception classes of `module` if it is loaded (else none of its exceptions can exist)."""
    loaded = sys.modules.get(module)
    if loaded is None:
        return ()
    found = (getattr(loaded, name, None) for name in names)
    return tuple(c for c in found if isinstance(c, type) and issubclass(c, BaseException))


def _status(code: int | None, server: Server) -> Verdict:
    """An HTTP status from a server: 5xx, 429 and 408 are outages; 401/403 (credentials) and 404 (the collection
    or model is not there) stop the stage; any other 4xx refuses this input."""
    why = f"HTTP {code}"
    if code is None:
        return Verdict(Failure.OUTAGE, server, "no status")
    if code >= 500 or code in (408, 429):
        return Verdict(Failure.OUTAGE, server, why)
    if code in (401, 403, 404, 407):
        return Verdict(Failure.STOP, server, why)
    return Verdict(Failure.POISON, server, why)


def _kafka(exc: Exception) -> Verdict | None:
    base = _classes("kafka.errors", "KafkaError")
    if not base or not isinstance(exc, base):
        return None
    # The broker lost this producer's state (restarted): the runner rebuilds the producer and sends again.
    state_lost = _classes(
        "kafka.errors",
        "OutOfOrderSequenceNumberError",
        "UnknownProducerIdError",
        "InvalidProducerEpochError",
        "InvalidProducerIdMappingError",
        "ProducerFencedError",
    )
    name = type(exc).__name__
    if getattr(exc, "retriable", False) or isinstance(exc, state_lost):
        return Verdict(Failure.OUTAGE, Server.BROKER, name)
    if "Authorization" in name or "Authentication" in name:
        return Verdict(Failure.STOP, Server.BROKER, name)
    return None  # e.g. a message too large: judged as an unknown exception


def _redis(exc: Exception) -> Verdict | None:
    base = _classes("redis.exceptions", "RedisError")
    if not base or not isinstance(exc, base):
        return None
    stop = _classes("redis.exceptions", "AuthenticationError", "AuthorizationError", "NoPermissionError")
    waits = _classes(
        "redis.exceptions",
        "ConnectionError",  # BusyLoadingError (the server loading its data) is one
        "TimeoutError",
        "ReadOnlyError",  # a replica, or a primary demoted while it fails over
        "OutOfMemoryError",  # maxmemory reached: writes refused until memory is freed
        "TryAgainError",
        "ClusterDownError",  # MasterDownError is one
    )
    message = str(exc).lstrip()
    code = getattr(exc, "status_code", None)  # redis-py keeps the reply's prefix here when it maps it to a class
    prefix = code if isinstance(code, str) else message.split(" ", 1)[0]
    if isinstance(exc, stop) or prefix in REDIS_STOP_PREFIXES:
        return Verdict(Failure.STOP, Server.GRAPH, prefix or type(exc).__name__)
    if isinstance(exc, waits) or prefix in REDIS_OUTAGE_PREFIXES:
        return Verdict(Failure.OUTAGE, Server.GRAPH, prefix if prefix in REDIS_OUTAGE_PREFIXES else type(exc).__name__)
    return Verdict(Failure.POISON, Server.GRAPH, type(exc).__name__)  # the server refused this query (its data)


def _neo4j(exc: Exception) -> Verdict | None:
    base = _classes("neo4j.exceptions", "Neo4jError", "DriverError")
    if not base or not isinstance(exc, base):
        return None
    name = type(exc).__name__
    if isinstance(exc, _classes("neo4j.exceptions", "AuthError", "Forbidden", "ConfigurationError")):
        return Verdict(Failure.STOP, Server.GRAPH, name)
    code = str(getattr(exc, "code", None) or "")
    if code.startswith("Neo.ClientError.Security.") or code == "Neo.ClientError.Database.DatabaseNotFound":
        return Verdict(Failure.STOP, Server.GRAPH, code)
    waits = _classes(
        "neo4j.exceptions",
        "ServiceUnavailable",
        "SessionExpired",
        "TransientError",
        "ConnectionAcquisitionTimeoutError",
    )
    retryable = getattr(exc, "is_retryable", None)
    if isinstance(exc, waits) or (callable(retryable) and retryable() is True):
        return Verdict(Failure.OUTAGE, Server.GRAPH, code or name)
    return Verdict(Failure.POISON, Server.GRAPH, code or name)


def _qdrant(exc: Exception) -> Verdict | None:
    (unexpected,) = _classes("qdrant_client.http.exceptions", "UnexpectedResponse") or (None,)
    if unexpected is not None and isinstance(exc, unexpected):
        code = getattr(exc, "status_code", None)
        return _status(code if isinstance(code, int) else None, Server.VECTOR)
    if isinstance(exc, _classes("qdrant_client.http.exceptions", "ResponseHandlingException")):
        # qdrant-client wraps whatever sending the request raised (a refused connection, a timeout)
        return Verdict(Failure.OUTAGE, Server.VECTOR, "no response")
    return None


def _openai(exc: Exception) -> Verdict | None:
    base = _classes("openai", "OpenAIError")
    if not base or not isinstance(exc, base):
        return None
    if isinstance(exc, _classes("openai", "APIConnectionError")):  # APITimeoutError is one
        return Verdict(Failure.OUTAGE, Server.LLM, type(exc).__name__)
    code = getattr(exc, "status_code", None)
    if isinstance(exc, _classes("openai", "APIStatusError")) and isinstance(code, int):
        if code in (400, 422, 500) and any(word in str(exc) for word in REFUSED_FORMAT_WORDS):
            # the endpoint refused even plain JSON mode (core/llm/client.py steps down first): no retry mends it
            return Verdict(Failure.STOP, Server.LLM, f"HTTP {code}: response format refused")
        return _status(code, Server.LLM)
    return Verdict(Failure.POISON, Server.LLM, type(exc).__name__)  # e.g. an answer cut at max_tokens


def _httpx(exc: Exception) -> Verdict | None:
    """A Qdrant server (or any HTTP service) reached with httpx, where its client does not wrap the error."""
    if isinstance(exc, _classes("httpx", "TransportError")):
        return Verdict(Failure.OUTAGE, None, type(exc).__name__)
    if isinstance(exc, _classes("httpx", "HTTPStatusError")):
        response = getattr(exc, "response", None)
        code = getattr(response, "status_code", None)
        return _status(code if isinstance(code, int) else None, Server.VECTOR)
    return None


def _builtin(exc: Exception) -> Verdict | None:
    """Socket-level failures that no client wrapped."""
    if isinstance(exc, (ConnectionError, TimeoutError, socket.gaierror)):
        return Verdict(Failure.OUTAGE, None, type(exc).__name__)
    if isinstance(exc, OSError) and exc.errno in NETWORK_ERRNOS:
        return Verdict(Failure.OUTAGE, None, errno.errorcode.get(exc.errno or 0, type(exc).__name__))
    return None
