"""Keyed, acknowledged writes: acks=all, in-order delivery per partition, a flush before anyone commits upstream.

Order matters: an article's chunks share a key (one partition) and the extract stage links short names to the
full names of earlier chunks. A plain producer with retries and several requests in flight can reorder them (a
failed batch is retried after a later one succeeded). The idempotent producer (sequence numbers per partition,
KIP-98) keeps order with up to 5 requests in flight and drops retried duplicates; where the broker cannot give a
producer id (no InitProducerId API), the producer falls back to one request in flight, which keeps order too.

A broker that loses its producer state (noida-db after kill -9 forgets the producer ids and sequence numbers it
handed out) answers the next batch with OutOfOrderSequenceNumber or UnknownProducerId. kafka-python fails that
batch's futures and, for some of these errors, stays in a fatal state that fails every later send: the producer is
rebuilt (`RecordProducer.rebuild`), which asks the broker for a fresh producer id, and the caller sends again.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from newskg.core.records import Record
from newskg.ingest.kafka import client
from newskg.ingest.kafka.client import (
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    KafkaError,
    OutOfOrderSequenceNumberError,
    Producer,
    ProducerFencedError,
    SendFuture,
    UnknownProducerIdError,
)

log = logging.getLogger(__name__)

INIT_PRODUCER_ID = 22  # Kafka API key of InitProducerId: the broker hands out producer ids (idempotence)
PRODUCE = 0  # Produce v3+ carries the record-batch format with producer id and sequence numbers

_support: dict[str, bool] = {}  # per bootstrap string: the answer does not change while the process runs

# What the broker answers when it no longer knows this producer's id, epoch or sequence numbers (lost in a crash,
# or expired): the writes were not taken; a producer with a fresh id can send them again. ProducerFenced is the
# fatal state kafka-python enters when the broker refuses its epoch bump; without transactional ids, nobody else can
# own this producer id, so a fresh producer is the remedy there too.
PRODUCER_STATE_LOST: tuple[type[KafkaError], ...] = (
    OutOfOrderSequenceNumberError,
    UnknownProducerIdError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    ProducerFencedError,
)
CLOSE_GRACE_S = 5.0  # how long a replaced producer may finish what other holders still have in flight


def producer_state_lost(exc: BaseException) -> bool:
    """The broker lost this producer's state: rebuild the producer and send again (see the module docstring)."""
    return isinstance(exc, PRODUCER_STATE_LOST)


def supports_idempotence(api_versions: dict[int, tuple[int, int]]) -> bool:
    """From the broker's ApiVersions answer: can it give a producer id and take sequenced batches?"""
    produce = api_versions.get(PRODUCE)
    return INIT_PRODUCER_ID in api_versions and produce is not None and produce[1] >= 3


def ordering_options(idempotent: bool) -> dict[str, Any]:
    """Producer options that keep an article's messages in order, with or without broker support."""
    if idempotent:
        # kafka-python raises (not silently downgrades) on a conflicting option when this is set explicitly;
        # retries stay at its default (unbounded within delivery_timeout_ms), as its documentation advises.
        return {"enable_idempotence": True, "max_in_flight_requests_per_connection": 5}
    return {"enable_idempotence": False, "max_in_flight_requests_per_connection": 1, "retries": 5}


def broker_supports_idempotence(options: dict[str, Any]) -> bool:
    key = ",".join(options["bootstrap_servers"])
    if key not in _support:
        admin = client.admin(options, request_timeout_ms=10000)
        try:
            versions = {int(api): (span[0], span[1]) for api, span in admin.api_versions().items()}
        except KafkaError as exc:  # cannot tell: the safe choice keeps order either way
            log.warning("could not read the broker's API versions (%s): one request in flight", exc)
            versions: dict[int, tuple[int, int]] = {}
        finally:
            admin.close()
        _support[key] = supports_idempotence(versions)
        if not _support[key]:
            log.warning("broker %s has no idempotent producer: sending with one request in flight", key)
    return _support[key]


class RecordProducer:
    """One kafka-python producer behind a stable object: several holders may share it (a stage runner and its dedup
    log), and `rebuild` swaps the producer underneath them all."""

    def __init__(self, options: dict[str, Any], linger_ms: int = 5):
        self.idempotent = broker_supports_idempotence(options)
        self._options, self._linger_ms = options, linger_ms
        self._lock = threading.Lock()
        # How many times it was rebuilt: `rebuild(seen)` replaces only the producer a caller saw fail.
        self.generation: int = 0
        self._producer = self._build()

    def _build(self) -> Producer:
        # gzip: HTML pages shrink 5-10x, which keeps large pages under the broker's 1 MB message limit.
        return client.producer(
            self._options,
            acks="all",
            linger_ms=self._linger_ms,
            compression_type="gzip",
            max_request_size=8 * 1024 * 1024,
            **ordering_options(self.idempotent),
        )

    def send(self, topic: str, key: str | None, value: Record | bytes) -> SendFuture:
        payload = value.to_bytes() if isinstance(value, Record) else value
        with self._lock:  # never onto a producer `rebuild` is closing
            return self._producer.send(topic, key=key.encode("utf-8") if key else None, value=payload)

    def flush(self, timeout_s: float = 60.0) -> None:
        """Block until every send so far is acknowledged (raises if any failed)."""
        self._producer.flush(timeout=timeout_s)

    def send_all(self, topic: str, items: Sequence[tuple[str | None, Record | bytes]]) -> None:
        """Send and wait for every acknowledgement; raises on the first failure."""
        futures = [self.send(topic, key, value) for key, value in items]
        self.flush()
        for future in futures:
            future.get(timeout=30)

    def rebuild(self, seen: int) -> bool:
        """Replace the kafka-python producer after the broker lost its state (`producer_state_lost`); `seen` is the
        `generation` the caller's failed sends went out on. When another holder has already rebuilt it since, this
        does nothing (False): one failure, one new producer id, however many holders saw it. The new producer is
        built before the old one is closed, so a broker that went away again leaves the old one in place (the
        error propagates; the caller retries later)."""
        with self._lock:
            if seen != self.generation:
                return False
            old, self._producer = self._producer, self._build()
            self.generation += 1
        log.warning(
            "the broker lost this producer's state: a new producer (generation %d) sends from here on", seen + 1
        )
        try:
            old.close(timeout=CLOSE_GRACE_S)
        except Exception as exc:  # the old one is discarded either way; its failure is no reason to stop
            log.warning("closing the replaced producer failed: %s: %s", type(exc).__name__, exc)
        return True

    def close(self) -> None:
        self._producer.close(timeout=30)
