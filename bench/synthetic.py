"""Synthetic graph facts the benches write: one M0 interaction between two entities on a day, with the
fields every bench fills the same way."""

from __future__ import annotations

from collections.abc import Sequence

from newskg.core.ids import interaction_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.timeaxes import day_iso, end_of_day_ms


def interaction_between(
    subject: Entity,
    obj: Entity,
    text: str,
    day: int,
    ingested_ms: int | None = None,
    chunk_ids: Sequence[str] = (),
    ingested_at: str = "2023-01-01T00:00:00Z",
) -> Interaction:
    """Published on its event day and, unless told otherwise, ingested a second before that day ends."""
    return Interaction(
        id=interaction_id(subject.id, obj.id, text, day, "M0"),
        subject_id=subject.id,
        subject_name=subject.name,
        object_id=obj.id,
        object_name=obj.name,
        text=text,
        event_day=day,
        published_day=day,
        ingested_at=ingested_at,
        ingested_ms=end_of_day_ms(day) - 1000 if ingested_ms is None else ingested_ms,
        variant="M0",
        chunk_ids=list(chunk_ids),
    )


def one_sentence_chunk(n: int, text: str, day: int, prefix: str = "bench") -> Chunk:
    """The n-th chunk of a bench graph: one sentence, its own article, published on its day and ingested at noon
    (the record says so; its ingestion instant is a second before the day ends)."""
    return Chunk(
        id=f"c_{prefix}_{n}",
        text=text,
        sentences=[text],
        article_id=f"a_{prefix}_{n}",
        article_ids=[f"a_{prefix}_{n}"],
        source="bench",
        source_id="s_bench",
        url=f"https://bench.invalid/{n}",
        day=day,
        published=day_iso(day),
        ingested_at=f"{day_iso(day)}T12:00:00Z",
        ingested_ms=end_of_day_ms(day) - 1000,
        sentence_start=0,
        sentence_end=1,
    )
