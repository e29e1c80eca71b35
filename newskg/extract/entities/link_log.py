"""The alias index every extract replica shares: a compacted Kafka topic of linking journals (`NEWSKG_TOPIC_LINKING`).

Each replica links with an in-memory index (extract/entities/alias_index.py). Alone, a replica would only learn what
its own partitions taught it, so three replicas linked ~7% of a shared story's links otherwise than one consumer
(issue 29). Now every chunk journal written to the graph is also an entry of this log, keyed by the journal's id:

- appended by the stage that wrote the chunk, as an output of the batch (extract/stage.py), so it is on the broker
  before the batch's offsets are committed, and only once the chunk's graph write succeeded: the log never holds
  what the graph does not. A chunk found written whole (a redelivery after a SIGKILL that came between the graph
  write and the append) has its journal appended again from the graph: an append is never lost for good;
- read by every replica before each batch (`catch_up`), outside the batch's transaction over the linker, and
  applied once (`Linker.held`: the journal ids the index holds, its own included), so what one replica learnt the
  others see from their next batch on: the propagation window is one batch, as with the dedup log.

At start a replica notes the log's end, then replays the graph's journals (the truth: every entry before the noted
end is in the graph by then), then tails from the noted end: reading the log from its beginning would only skip
journals the graph replay gave already. The index applies journals commutatively (alias_index.py), so the order
the log, the graph replay and the replica's own linking interleave them in does not change what it holds.

One partition: the entries of one article's chunks stay in the order they were linked in (what a chunk adds to its
article's memory is ordered), and the volume, one entry per chunk, is small. Compacted, as the dedup log, so a
journal put on it again keeps one entry. The log belongs to one graph: a replica tailing it applies what it reads.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any, Protocol

from kafka.errors import KafkaTimeoutError

from newskg.core.records import Chunk, LinkingEntry, LinkJournal, RecordError
from newskg.extract.entities.journal import journal_id
from newskg.ingest.kafka import client

if TYPE_CHECKING:  # (topic creation reads this module's constants: it should not load spaCy with the linker)
    from newskg.extract.entities.linker import Linker

log = logging.getLogger(__name__)

LOG_TOPIC_CONFIG = {"cleanup.policy": "compact"}  # as the dedup log's: time retention would drop shared state
LOG_PARTITIONS = 1
STALL_S = 30.0  # a read behind the log's end that gets nothing this long: the broker is out of reach


def entry(chunk: Chunk, journal: LinkJournal) -> tuple[str, LinkingEntry]:
    """(key, entry) of a chunk record's journal."""
    key = journal_id(chunk)
    return key, LinkingEntry(journal_id=key, chunk_id=chunk.id, journal=journal)


def apply_entry(linker: Linker, value: bytes | None) -> bool:
    """One log entry into the linker, unless it holds it already; True when applied. An entry this build cannot
    read, or whose operations fail, is skipped with a warning (its operations undone), never raised: one bad entry
    must not stop every replica."""
    if value is None:  # a tombstone
        return False
    try:
        item = LinkingEntry.from_bytes(value)
    except RecordError as exc:
        log.warning("skipping a bad linking log entry: %s", exc)
        return False
    if item.journal_id in linker.held:
        return False
    mark = linker.mark()
    try:
        linker.replay(item.journal)
    except Exception as exc:  # (a journal naming an entity it never added: written by another build)
        linker.rollback(mark)
        linker.commit()
        log.warning("skipping linking log entry %s: %s: %s", item.journal_id, type(exc).__name__, exc)
        return False
    linker.commit()
    linker.held.add(item.journal_id)
    return True


class SharedLinking(Protocol):
    """What the extract stage needs of the log: its topic (to append to) and `catch_up`. LinkLog on the broker;
    bench/determinism.py shares one in memory between in-process stages."""

    topic: str

    def catch_up(self, linker: Linker) -> int: ...


class LinkLog:
    """The log's reader (appends go out with a batch's other writes, through the stage runner's producer)."""

    def __init__(self, options: dict[str, Any], topic: str):
        self.topic = topic
        self._reader, self._tps = client.log_reader(
            options,
            topic,
            max_poll_records=5_000,
            check_crcs=False,  # as the dedup log's reader: the broker checked them; entries are validated
        )
        # Noted now, before the caller replays the graph's journals: everything before it is in the graph by then.
        for tp, end in (self._reader.end_offsets(self._tps) if self._tps else {}).items():
            self._reader.seek(tp, end)

    def catch_up(self, linker: Linker) -> int:
        """Apply every entry appended since the last call (by any replica) that the linker does not hold; returns
        how many were applied. Call outside a transaction over the linker."""
        if not self._tps:
            return 0
        ends = self._reader.end_offsets(self._tps)
        applied, progress = 0, time.monotonic()
        while any(self._reader.position(tp) < end for tp, end in ends.items()):
            polled = self._reader.poll(timeout_ms=500)
            for records in polled.values():
                applied += sum(apply_entry(linker, record.value) for record in records)
            if polled:
                progress = time.monotonic()
            elif time.monotonic() - progress > STALL_S:
                # the broker went away mid-read: an outage (the runner holds the batch and retries), not a hang
                raise KafkaTimeoutError(f"linking log {self.topic}: no entry for {STALL_S:.0f} s while behind")
        if applied:
            log.debug("linking log %s: %d journal(s) of other replicas applied", self.topic, applied)
        return applied

    def close(self) -> None:
        self._reader.close()
