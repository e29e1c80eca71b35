"""The one failure classifier (core/failures.py): every server the project talks to, outage / stop / poison.

Review finding: "Misclassified failures: a Qdrant `UnexpectedResponse` (503 during a restart, 429, 401) and
FalkorDB `READONLY`/`OOM` are not outages, so a whole batch is written to the graph, then dead-lettered as
`graph_write_error` and committed ... Whether a server is out of reach is decided in three places. Make it one
classifier (outage / poison input / bug) that the runner, `must_stop` and the CLI all use." The runner and the
extract stage holding such a batch are in tests/unit/test_outage_handling.py."""

import errno
import socket

import httpx
import neo4j.exceptions
import openai
import pytest
import redis.exceptions
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse
from redis._parsers.base import BaseParser

from newskg.core.failures import Failure, Server, classify, must_stop, outage
from newskg.core.llm.client import BudgetExceeded
from newskg.core.records import RecordError
from newskg.extract import failures as extract_failures
from newskg.ingest.kafka import client as kafka
from newskg.ingest.kafka.producer import PRODUCER_STATE_LOST
from newskg.ingest.kafka.stage import StageRunner, kafka_outage
from newskg.ingest.process.guards import Rejected

OUTAGE, STOP, POISON = Failure.OUTAGE, Failure.STOP, Failure.POISON
REQUEST = httpx.Request("POST", "http://llm.test/v1/chat/completions")


def redis_reply_error(reply: str) -> Exception:
    """The exception redis-py raises for a server's error reply (its own prefix → class mapping)."""
    return BaseParser.parse_error(reply)


def neo4j_error(code: str) -> Exception:
    """A Neo4j server error as the driver builds it from the server's code."""
    return neo4j.exceptions.Neo4jError._hydrate_neo4j(code=code, message="from the server")


def qdrant(status: int) -> UnexpectedResponse:
    return UnexpectedResponse(status, "reason", b'{"status": {"error": "x"}}', httpx.Headers())


def openai_status(cls: type[openai.APIStatusError], status: int, message: str = "error") -> openai.APIStatusError:
    return cls(message, response=httpx.Response(status, request=REQUEST), body=None)


def wrapped(cause: BaseException) -> Exception:
    try:
        raise RuntimeError("the store failed") from cause
    except RuntimeError as exc:
        return exc


# (exception, failure, server): the classifier's table, as the README states it.
TABLE = [
    # the Kafka broker (kafka-python): retriable errors and a lost producer state are outages
    (kafka.KafkaConnectionError("refused"), OUTAGE, Server.BROKER),
    (kafka.KafkaTimeoutError("Unable to bootstrap"), OUTAGE, Server.BROKER),
    (kafka.NodeNotReadyError("node 1"), OUTAGE, Server.BROKER),
    (kafka.OutOfOrderSequenceNumberError("seq"), OUTAGE, Server.BROKER),
    (kafka.ProducerFencedError("fenced"), OUTAGE, Server.BROKER),
    (pytest.importorskip("kafka.errors").TopicAuthorizationFailedError("acl"), STOP, Server.BROKER),
    # FalkorDB / redis (RESP)
    (redis.exceptions.ConnectionError("Connection refused"), OUTAGE, Server.GRAPH),
    (redis.exceptions.TimeoutError("Timeout reading from socket"), OUTAGE, Server.GRAPH),
    (redis_reply_error("LOADING Redis is loading the dataset in memory"), OUTAGE, Server.GRAPH),
    (redis_reply_error("READONLY You can't write against a read only replica."), OUTAGE, Server.GRAPH),
    (redis_reply_error("OOM command not allowed when used memory > 'maxmemory'."), OUTAGE, Server.GRAPH),
    (redis.exceptions.ResponseError("READONLY You can't write against a read only replica."), OUTAGE, Server.GRAPH),
    (redis.exceptions.ResponseError("OOM command not allowed"), OUTAGE, Server.GRAPH),  # inside a reply
    (redis_reply_error("NOAUTH Authentication required."), STOP, Server.GRAPH),
    (redis_reply_error("WRONGPASS invalid username-password pair"), STOP, Server.GRAPH),
    (redis_reply_error("NOPERM this user has no permissions to run the 'graph.query' command"), STOP, Server.GRAPH),
    (redis.exceptions.ResponseError("errMsg: Invalid input 'x': expected ..."), POISON, Server.GRAPH),
    # Neo4j (Bolt)
    (neo4j.exceptions.ServiceUnavailable("unreachable"), OUTAGE, Server.GRAPH),
    (neo4j.exceptions.SessionExpired("expired"), OUTAGE, Server.GRAPH),
    (neo4j_error("Neo.TransientError.General.DatabaseUnavailable"), OUTAGE, Server.GRAPH),
    (neo4j_error("Neo.TransientError.Transaction.DeadlockDetected"), OUTAGE, Server.GRAPH),
    (neo4j_error("Neo.ClientError.Security.Unauthorized"), STOP, Server.GRAPH),
    (neo4j_error("Neo.ClientError.Database.DatabaseNotFound"), STOP, Server.GRAPH),
    (neo4j_error("Neo.ClientError.Statement.SyntaxError"), POISON, Server.GRAPH),
    # Qdrant server (qdrant-client over HTTP)
    (qdrant(503), OUTAGE, Server.VECTOR),
    (qdrant(502), OUTAGE, Server.VECTOR),
    (qdrant(429), OUTAGE, Server.VECTOR),
    (qdrant(401), STOP, Server.VECTOR),
    (qdrant(403), STOP, Server.VECTOR),
    (qdrant(404), STOP, Server.VECTOR),  # the collection is not there: no point dead-lettering every point
    (qdrant(400), POISON, Server.VECTOR),
    (qdrant(422), POISON, Server.VECTOR),
    (ResponseHandlingException(httpx.ConnectError("refused")), OUTAGE, Server.VECTOR),
    # the LLM endpoint (openai SDK)
    (openai.APIConnectionError(request=REQUEST), OUTAGE, Server.LLM),
    (openai.APITimeoutError(request=REQUEST), OUTAGE, Server.LLM),
    (openai_status(openai.RateLimitError, 429), OUTAGE, Server.LLM),
    (openai_status(openai.InternalServerError, 503), OUTAGE, Server.LLM),
    (openai_status(openai.AuthenticationError, 401), STOP, Server.LLM),
    (openai_status(openai.PermissionDeniedError, 403), STOP, Server.LLM),
    (openai_status(openai.NotFoundError, 404, "model 'x' not found"), STOP, Server.LLM),
    (openai_status(openai.InternalServerError, 500, "response_format: not supported"), STOP, Server.LLM),
    (openai_status(openai.BadRequestError, 400, "maximum context length exceeded"), POISON, Server.LLM),
    # no client: sockets
    (httpx.ConnectError("refused"), OUTAGE, None),
    (ConnectionRefusedError(errno.ECONNREFUSED, "refused"), OUTAGE, None),
    (TimeoutError("timed out"), OUTAGE, None),
    (socket.gaierror(-3, "Temporary failure in name resolution"), OUTAGE, None),
    (OSError(errno.EHOSTUNREACH, "No route to host"), OUTAGE, None),
    # ours and the input's
    (BudgetExceeded("LLM call budget of 3 spent"), STOP, None),
    (KeyboardInterrupt(), STOP, None),
    (MemoryError(), STOP, None),
    (RecordError("malformed_json", "bad"), POISON, None),
    (Rejected("too_large", "6 MB"), POISON, None),
    (ValueError("[E088] Text of length 1200000 exceeds maximum of 1000000"), POISON, None),
    (KeyError("x"), POISON, None),
    (FileNotFoundError(errno.ENOENT, "no such file"), POISON, None),
    # a wrapper does not hide what it wraps
    (wrapped(qdrant(503)), OUTAGE, Server.VECTOR),
    (wrapped(ValueError("x")), POISON, None),
]


@pytest.mark.parametrize(("exc", "failure", "server"), TABLE, ids=lambda v: type(v).__name__ if v else "-")
def test_the_classifier_table(exc, failure, server):
    verdict = classify(exc)
    assert (verdict.failure, verdict.server) == (failure, server), verdict
    assert outage(exc) is (failure is OUTAGE)
    assert must_stop(exc) is (failure is not POISON)


def test_review_finding_qdrant_503_and_falkordb_readonly_are_outages_everywhere():
    """Review finding: a Qdrant 503 or FalkorDB READONLY was not an outage, so a batch written to the graph was
    dead-lettered as graph_write_error and committed. The runner's default, `kafka_outage`, the extract stage's
    guard and `outage` are one function now."""
    readonly = redis_reply_error("READONLY You can't write against a read only replica.")
    for exc in (qdrant(503), readonly):
        assert kafka_outage(exc) and extract_failures.outage(exc) and extract_failures.must_stop(exc)
    assert StageRunner.__init__.__defaults__ == (outage, None)  # (outage, order)
    assert kafka_outage is outage and extract_failures.outage is outage and extract_failures.must_stop is must_stop


def test_every_lost_producer_state_is_an_outage():
    """The runner rebuilds its producer on these (ingest/kafka/producer.py): the classifier must hold the batch."""
    for cls in PRODUCER_STATE_LOST:
        assert classify(cls("lost")).failure is OUTAGE, cls


def test_a_library_never_imported_is_never_imported_to_classify(monkeypatch):
    """The classifier looks classes up in sys.modules: classifying costs no client import (the CLI's start-up)."""
    import sys

    monkeypatch.delitem(sys.modules, "qdrant_client.http.exceptions")
    assert classify(ValueError("x")).failure is POISON
    assert "qdrant_client.http.exceptions" not in sys.modules
