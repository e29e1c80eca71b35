"""What a source will not send on (an empty page or file, a corrupt or over-size gzip, an unusable URL, a target
it must not fetch) becomes a dead letter the source produces itself, built from the error that carries the reason
code: the item never vanishes, and the poll or run goes on with the next one."""

from __future__ import annotations

from newskg.core.errors import NewskgError
from newskg.core.records import DeadLetter
from newskg.core.timeaxes import iso, utc_now
from newskg.ingest.kafka.stage import EXCERPT_CHARS


class SourceRejected(NewskgError):
    """An input item a source does not send on; `reason` is its dead-letter code, `detail` says which and why."""

    REASON = "source_rejected"

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}", reason=reason)
        self.detail = detail


def source_dead_letter(stage: str, key: str, error: SourceRejected, payload: bytes = b"") -> DeadLetter:
    """The dead letter for an item a source read (no topic, partition or offset: it never reached Kafka); `key`
    names the item (its URL, or path[:line]), the excerpt is the payload's start, else the key."""
    excerpt = payload[:EXCERPT_CHARS].decode("utf-8", "replace") if payload else key
    return DeadLetter(
        reason=error.reason,
        detail=error.detail[:2000],
        stage=stage,
        topic="",
        partition=-1,
        offset=-1,
        key=key,
        payload_excerpt=excerpt,
        payload_bytes=len(payload),
        at=iso(utc_now()),
    )
