"""What extraction makes of one chunk: linked mentions, entities, the marked-up text and interactions."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

from newskg.core.ids import interaction_id
from newskg.core.records import Chunk, Entity, Interaction, Variant
from newskg.extract.entities.journal import LinkJournal
from newskg.extract.entities.linker import LinkedMention
from newskg.extract.openie.confidence import FactSignals


@dataclass
class ChunkExtraction:
    chunk: Chunk
    mentions: list[LinkedMention]
    entities: list[Entity]
    marked_text: str
    interactions: list[Interaction] = field(default_factory=list[Interaction])
    journal: LinkJournal | None = None  # what linking it taught the linker (kept with the chunk: journal.py)
    # an M0 fact's id → what it was made of
    signals: dict[str, FactSignals] = field(default_factory=dict[str, FactSignals])

    def as_dict(self, explain: bool = False) -> dict[str, object]:
        mentions = [
            {
                "text": m.text,
                "start": m.start,
                "end": m.end,
                "type": m.type,
                "entity_id": m.entity_id,
                "name": m.name,
                "method": m.method,
                **({"explanation": m.explanation} if explain else {}),
            }
            for m in self.mentions
        ]
        return {
            "chunk_id": self.chunk.id,
            "day": self.chunk.day,
            "marked_text": self.marked_text,
            "entities": [e.model_dump(mode="json", exclude={"schema_version"}) for e in self.entities],
            "mentions": mentions,
            "interactions": [i.model_dump(mode="json", exclude={"schema_version"}) for i in self.interactions],
        }


class EntityEnd(Protocol):
    """An interaction's subject or object: a linked mention, or an M2 pair's entity (openie/llm_variants.py)."""

    @property
    def entity_id(self) -> str: ...

    @property
    def name(self) -> str: ...


@dataclass(frozen=True)
class ExtractedBy:
    """How an interaction was extracted: its variant, the rule that made it (default: the variant's name) and the
    fitted confidence (M0's; none for the LLM variants)."""

    variant: Variant
    rule: str | None = None
    confidence: float | None = None


def make_interaction(
    chunk: Chunk,
    subject: LinkedMention,
    obj: LinkedMention | None,
    text: str,
    event_day: int,
    by: ExtractedBy,
) -> Interaction:
    """An interaction stated by one chunk, carrying that chunk's publication day and ingestion instant."""
    return _interaction([chunk], subject, obj, text, event_day, by)


def make_day_interaction(
    evidence: list[Chunk],
    subject: EntityEnd,
    obj: EntityEnd,
    text: str,
    event_day: int,
    variant: Variant,
    read: list[Chunk] | None = None,
) -> Interaction:
    """An interaction stated by one or more chunks of one publication day (an M2 line's cited chunks of that day).
    It carries the day and the earliest ingestion among *those* chunks (never another chunk's: as of D shows a
    fact only once a chunk that states it was published and ingested), and their articles and sources.

    `read`: every chunk its text was written from (an M2 line citing snippets of day 1 and day 20 is one text
    read off both). Such a text is visible only once all of them are: the latest publication day and the latest
    ingestion among them, whatever day it is dated on (NEON's expansion keeps one fact per cited day)."""
    days = {c.day for c in evidence}
    if len(days) != 1:
        raise ValueError(f"evidence of one interaction must share one publication day, got {sorted(days)}")
    made = _interaction(evidence, subject, obj, text, event_day, ExtractedBy(variant))
    if not read:
        return made
    last = max(read, key=lambda c: (c.ingested_ms, c.id))
    latest_day = max(c.day for c in read)
    return made.model_copy(
        update={"published_day": latest_day, "ingested_ms": last.ingested_ms, "ingested_at": last.ingested_at}
    )


def _interaction(
    evidence: list[Chunk],
    subject: EntityEnd,
    obj: EntityEnd | None,
    text: str,
    event_day: int,
    by: ExtractedBy,
) -> Interaction:
    """Stated by the chunks `evidence` (its chunk ids, in order): the earliest ingested gives the publication day
    and ingestion instant."""
    first = min(evidence, key=lambda c: (c.ingested_ms, c.id))
    object_id = obj.entity_id if obj else None
    variant = by.variant
    return Interaction(
        id=interaction_id(subject.entity_id, object_id, text, event_day, variant),
        subject_id=subject.entity_id,
        subject_name=subject.name,
        object_id=object_id,
        object_name=obj.name if obj else None,
        text=text,
        event_day=event_day,
        published_day=first.day,
        ingested_at=first.ingested_at,
        ingested_ms=first.ingested_ms,
        variant=variant,
        chunk_ids=[c.id for c in evidence],
        article_ids=_union(a for c in evidence for a in c.article_ids),
        source_ids=_union(c.source_id for c in evidence),
        rule=by.rule or variant,
        confidence=by.confidence,
    )


def _union(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))
