"""The dedup index's durable, shared state: a Kafka topic replayed into memory.

Three kinds of entry, keyed so that a compacted topic keeps exactly the latest one of each:
  - DedupSignature, keyed by chunk id: a kept chunk's MinHash signature;
  - DedupSighting, keyed by article id + its own chunk id: a sighting already emitted, so the same article ingested
    again emits nothing;
  - DedupRelease, keyed `released/` + chunk id, written by the extract stage together with the dead letter of a
    chunk it could not extract or write (`release_entry`): the chunk is not in the graph, so its signature is let
    go and later near-duplicates are extracted instead of becoming sightings of a chunk that never exists. It names
    the record that emitted the chunk, so it applies in whichever order the two stages' entries are read.
The topic is created with cleanup.policy=compact (`LOG_TOPIC_CONFIG`): time-based retention (Kafka's default 7
days) would silently delete the state, and every key is written once (a chunk id is a hash of its text), so
compaction keeps it all while dropping superseded copies. What the index holds is bounded by the publication
window (`NEWSKG_DEDUP_WINDOW_DAYS`), not by the topic: entries older than the window are read and skipped.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from newskg.core.records import DedupRelease, DedupSighting, DedupSignature, RecordError, decode_any
from newskg.ingest.kafka import client
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.process.dedup import DedupIndex, LeanMinHash
from newskg.ingest.process.log_keys import sighting_key, signature_key

log = logging.getLogger(__name__)

LOG_TOPIC_CONFIG = {"cleanup.policy": "compact"}
PROGRESS_EVERY_S = 5.0
RECEIVE_MAX_BYTES = 2**31 - 1  # the largest frame the Kafka protocol's int32 length allows


@dataclass
class ReplayStats:
    read: int = 0  # entries read from the log
    held: int = 0  # entries now in the index (signatures and sightings)
    skipped: int = 0  # older than the window, written with other settings, or unreadable
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return self.read / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class Kept:
    chunk_id: str
    article_id: str
    minhash: LeanMinHash
    day: int | None
    ingested_ms: int | None = None


def apply_entry(index: DedupIndex, value: bytes | None) -> bool:
    """One log entry into the index; True when the index now holds (or let go of) something. An entry this build
    cannot read is skipped with a warning, never raised: one bad entry must not keep every replica from starting."""
    if value is None:  # a tombstone: nothing to hold
        return False
    try:
        entry = decode_any(value)
    except RecordError as exc:
        log.warning("skipping a bad dedup log entry: %s", exc)
        return False
    if isinstance(entry, DedupRelease):
        released = index.release(entry.chunk_id, entry.ingested_ms, entry.day)
        if released:
            log.info("dedup: released chunk %s (dead-lettered downstream: %s)", entry.chunk_id, entry.reason)
        return released
    if isinstance(entry, DedupSighting):
        return index.add_sighting(
            entry.article_id, entry.chunk_id, entry.kept_chunk_id, entry.day, entry.ingested_ms, entry.similarity
        )
    if not isinstance(entry, DedupSignature) or entry.num_perm != index.signer.num_perm:
        return False  # another kind, or written with other settings: not comparable
    try:
        values = index.signer.decode_values(entry.minhash)
    except ValueError as exc:  # binascii.Error is one; also a length that is no whole number of uint32
        log.warning("skipping a dedup log entry with an undecodable signature: %s", exc)
        return False
    if len(values) != index.signer.num_perm:
        log.warning("skipping a dedup log entry whose signature has %d values, not %d", len(values), entry.num_perm)
        return False
    return index.load(entry.chunk_id, entry.article_id, values, entry.day, entry.ingested_ms)


class SignatureLog:
    def __init__(self, options: dict[str, Any], topic: str, producer: RecordProducer):
        self.topic = topic
        self.replayed = False  # True once the log was read to the end offsets seen at start (ready to decide)
        self._producer = producer
        # A replay reads the whole log: large fetches and polls, and no client-side CRC32C check of each record
        # batch, which kafka-python computes in pure Python unless the `crc32c` C package is installed (it took
        # 8 of 14 s of a 30k-entry replay here). The broker checked the CRC when the batch was produced, and
        # every entry is still validated as a record. noida-db 0.2.3 ignores the fetch size limits and answers
        # with everything after the offset (109 MB for a 200k-signature log): a larger frame limit than
        # kafka-python's 100 MB lets such a log be read at all; Kafka honours the limits and never sends one.
        self._reader, self._tps = client.log_reader(
            options,
            topic,
            fetch_max_bytes=64 * 1024 * 1024,
            max_partition_fetch_bytes=16 * 1024 * 1024,
            max_poll_records=20_000,
            check_crcs=False,
            receive_message_max_bytes=RECEIVE_MAX_BYTES,
        )
        self._reader.seek_to_beginning(*self._tps)

    def replay(self, index: DedupIndex) -> ReplayStats:
        """Read the whole log into the index, logging progress and rate; no time cap: deciding without the shared
        state would re-emit duplicates, so the stage is not ready (and joins no group) until this returns."""
        stats = self.catch_up(index)
        self.replayed = True
        log.info(
            "dedup log %s replayed: %d entries in %.1f s (%.0f/s); index holds %d chunks and %d sightings, "
            "%d entries skipped (older than the %s-day window or unreadable)",
            self.topic,
            stats.read,
            stats.seconds,
            stats.rate,
            len(index),
            index.sightings,
            stats.skipped,
            index.window.days,
        )
        return stats

    def catch_up(self, index: DedupIndex) -> ReplayStats:
        """Read every entry written so far (by any replica) into the index; a read that takes long (the start-up
        replay, a slow broker) logs its progress every PROGRESS_EVERY_S."""
        stats = ReplayStats()
        if not self._tps:
            return stats
        ends = self._reader.end_offsets(self._tps)
        total = sum(end - self._reader.position(tp) for tp, end in ends.items())
        started = last_report = time.monotonic()
        while any(self._reader.position(tp) < end for tp, end in ends.items()):
            for records in self._reader.poll(timeout_ms=500).values():
                for record in records:
                    stats.read += 1
                    if apply_entry(index, record.value):
                        stats.held += 1
                    else:
                        stats.skipped += 1
            now = time.monotonic()
            if now - last_report >= PROGRESS_EVERY_S:
                last_report = now
                log.info(
                    "dedup log %s: replayed %d of %d entries (%.0f/s)",
                    self.topic,
                    stats.read,
                    total,
                    stats.read / (now - started),
                )
        index.settle()
        stats.seconds = time.monotonic() - started
        return stats

    def append(self, index: DedupIndex, kept: Sequence[Kept], sighted: Sequence[DedupSighting]) -> None:
        """Write kept signatures and emitted sightings and wait for the acknowledgement."""
        items: list[tuple[str | None, DedupSignature | DedupSighting]] = [
            (
                signature_key(k.chunk_id),
                DedupSignature(
                    chunk_id=k.chunk_id,
                    article_id=k.article_id,
                    num_perm=index.signer.num_perm,
                    minhash=index.signer.encode(k.minhash),
                    day=k.day,
                    ingested_ms=k.ingested_ms,
                ),
            )
            for k in kept
        ]
        items += [(sighting_key(s.article_id, s.chunk_id), s) for s in sighted]
        if items:
            self._producer.send_all(self.topic, items)

    def close(self) -> None:
        self._reader.close()
