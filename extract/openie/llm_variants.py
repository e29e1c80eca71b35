"""M1 and M2 (NEON §2.1) over linked, marked-up chunks, through the LLM client.

M1: one call per (subject, chunk); every answer line that names another marked entity becomes an interaction
dated by the chunk. M2: one call per (subject, object, batch of k chunks sorted by time); every answer line is
expanded over the batch's distinct days."""

from __future__ import annotations

from dataclasses import dataclass

import pendulum

from core.records import Chunk, Interaction
from core.timeaxes import day_iso
from extract.entities.linker import LinkedMention
from extract.entities.names import name_key
from extract.llm.client import LLMClient
from extract.llm.prompts import m1_subject, m2_pair
from extract.result import ChunkExtraction, make_interaction


def day_words(day: int) -> str:
    return pendulum.parse(day_iso(day)).format("MMMM D, YYYY")


def match_object(line: str, subject_id: str, candidates: list[LinkedMention]) -> LinkedMention | None:
    """The marked entity (other than the subject) that the line names, longest name first."""
    text = f" {name_key(line)} "
    forms = sorted(((name_key(form), m) for m in candidates if m.entity_id != subject_id
                    for form in {m.name, m.text}), key=lambda fm: -len(fm[0]))
    for form, mention in forms:
        if form and f" {form} " in text:
            return mention
    return None


def first_mentions(extraction: ChunkExtraction) -> dict[str, LinkedMention]:
    out: dict[str, LinkedMention] = {}
    for m in extraction.mentions:
        out.setdefault(m.entity_id, m)
    return out


def run_m1(client: LLMClient, extraction: ChunkExtraction, subject_ids: set[str]) -> list[Interaction]:
    chunk, found = extraction.chunk, []
    for entity_id, subject in first_mentions(extraction).items():
        if entity_id not in subject_ids:
            continue
        answer = client.complete(m1_subject.build(subject.name, extraction.marked_text, day_words(chunk.day)))
        for line in answer.interactions if answer else []:
            obj = match_object(line, entity_id, extraction.mentions)
            if obj is not None:
                found.append(make_interaction(chunk, subject, obj, line, chunk.day, "M1"))
    return found


@dataclass(frozen=True)
class EntityRef:
    entity_id: str
    name: str


def batches(items: list, k: int, key=lambda item: item) -> list[list]:
    """Sorted by time (day, ingestion instant, id), cut into batches of k; the last may be shorter."""
    ordered = sorted(items, key=lambda item: (key(item).day, key(item).ingested_ms, key(item).id))
    return [ordered[i:i + k] for i in range(0, len(ordered), k)]


def run_m2(client: LLMClient, subject: EntityRef, obj: EntityRef, batch: list[tuple[Chunk, str]]) -> list[Interaction]:
    """One call for (subject, object, k marked chunks in time order); each answer line expanded over the
    batch's distinct days (NEON: R = ∪_{t ∈ T'} (t, NEI(s, o)))."""
    snippets = [(day_words(chunk.day), marked) for chunk, marked in batch]
    answer = client.complete(m2_pair.build(subject.name, obj.name, snippets))
    interactions = []
    for line in answer.interactions if answer else []:
        for day in sorted({chunk.day for chunk, _ in batch}):
            same_day = [chunk for chunk, _ in batch if chunk.day == day]
            interactions.append(make_interaction(same_day[0], subject, obj, line, day, "M2",
                                                 chunk_ids=[c.id for c in same_day]))
    return interactions
