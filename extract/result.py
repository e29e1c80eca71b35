"""What extraction makes of one chunk: linked mentions, entities, the marked-up text and interactions."""

from __future__ import annotations

from dataclasses import dataclass, field

from core.ids import interaction_id
from core.records import Chunk, Entity, Interaction, Variant
from extract.entities.linker import LinkedMention


@dataclass
class ChunkExtraction:
    chunk: Chunk
    mentions: list[LinkedMention]
    entities: list[Entity]
    marked_text: str
    interactions: list[Interaction] = field(default_factory=list)

    def as_dict(self, explain: bool = False) -> dict:
        mentions = [{"text": m.text, "start": m.start, "end": m.end, "type": m.type, "entity_id": m.entity_id,
                     "name": m.name, "method": m.method, **({"explanation": m.explanation} if explain else {})}
                    for m in self.mentions]
        return {"chunk_id": self.chunk.id, "day": self.chunk.day, "marked_text": self.marked_text,
                "entities": [e.model_dump(mode="json", exclude={"schema_version"}) for e in self.entities],
                "mentions": mentions,
                "interactions": [i.model_dump(mode="json", exclude={"schema_version"}) for i in self.interactions]}


def make_interaction(chunk: Chunk, subject: LinkedMention, obj: LinkedMention | None, text: str, event_day: int,
                     variant: Variant, chunk_ids: list[str] | None = None) -> Interaction:
    object_id = obj.entity_id if obj else None
    return Interaction(id=interaction_id(subject.entity_id, object_id, text, event_day), subject_id=subject.entity_id,
                       subject_name=subject.name, object_id=object_id, object_name=obj.name if obj else None,
                       text=text, event_day=event_day, published_day=chunk.day, ingested_at=chunk.ingested_at,
                       ingested_ms=chunk.ingested_ms, variant=variant, chunk_ids=chunk_ids or [chunk.id],
                       article_ids=list(chunk.article_ids), source_ids=[chunk.source_id])
