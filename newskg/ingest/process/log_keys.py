"""How entries of the shared dedup log (ingest/process/signature_log.py) are keyed, so that a compacted topic keeps
the latest entry of each; and the release entry the extract stage writes there. Kept apart from the log itself so
a writer of the log (the extract stage) does not import the MinHash index."""

from __future__ import annotations

from newskg.core.records import Chunk, DedupRelease


def signature_key(chunk_id: str) -> str:
    return chunk_id


def sighting_key(article_id: str, chunk_id: str) -> str:
    return f"{article_id}/{chunk_id}"


def release_key(chunk_id: str) -> str:
    return f"released/{chunk_id}"


def release_entry(chunk: Chunk, reason: str) -> tuple[str, DedupRelease]:
    """(key, entry) letting go of the signature of a chunk the extract stage dead-lettered."""
    entry = DedupRelease(chunk_id=chunk.id, ingested_ms=chunk.ingested_ms, day=chunk.day, reason=reason)
    return release_key(chunk.id), entry
