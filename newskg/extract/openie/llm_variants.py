"""M1 and M2 (NEON §2.1) over linked, marked-up chunks, through the LLM client.

M1: one call per (subject, chunk); every answer line that names another marked entity becomes an interaction
dated by the chunk. M2: one call per (subject, object, batch of k chunks sorted by time); every answer line cites
the snippets that state it and is expanded over the distinct days of those cited chunks only (NEON's timestamp
expansion restricted to the line's evidence: a fact first reported on day 20 never shows as of day 1)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from newskg.core.llm.client import LLMClient
from newskg.core.records import Chunk, Interaction, Variant
from newskg.core.timeaxes import day_words
from newskg.extract.entities.linker import LinkedMention
from newskg.extract.entities.names import name_key
from newskg.extract.prompts import m1_subject, m2_pair
from newskg.extract.result import ChunkExtraction, ExtractedBy, make_day_interaction, make_interaction

T = TypeVar("T")


def match_object(line: str, subject_id: str, candidates: list[LinkedMention]) -> LinkedMention | None:
    """The marked entity (other than the subject) that the line names, longest name first."""
    text = f" {name_key(line)} "
    forms = sorted(
        ((name_key(form), m) for m in candidates if m.entity_id != subject_id for form in {m.name, m.text}),
        key=lambda fm: -len(fm[0]),
    )
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
    chunk = extraction.chunk
    found: list[Interaction] = []
    for entity_id, subject in first_mentions(extraction).items():
        if entity_id not in subject_ids:
            continue
        answer = client.complete(m1_subject.build(subject.name, extraction.marked_text, day_words(chunk.day)))
        for line in answer.interactions if answer else []:
            obj = match_object(line, entity_id, extraction.mentions)
            if obj is not None:
                found.append(make_interaction(chunk, subject, obj, line, chunk.day, ExtractedBy(Variant.M1)))
    return found


@dataclass(frozen=True)
class EntityRef:
    entity_id: str
    name: str


@dataclass(frozen=True)
class M2Snippet:
    """One chunk of an M2 batch: the chunk, its `<e>` marked text and the entities it is linked to."""

    chunk: Chunk
    marked: str
    entity_ids: frozenset[str] = frozenset()


@dataclass
class M2Answer:
    """What one M2 call gave: the dated interactions, and what became of the answer's lines."""

    parsed: bool
    interactions: list[Interaction] = field(default_factory=list[Interaction])
    lines_kept: int = 0
    lines_dropped: int = 0  # cited no snippet of the batch that names both entities


def _itself(chunk: Chunk) -> Chunk:
    return chunk


def batches(items: list[T], k: int, key: Callable[[T], Chunk] = _itself) -> list[list[T]]:
    """Sorted by time (day, ingestion instant, id), cut into batches of k; the last may be shorter."""
    ordered = sorted(items, key=lambda item: (key(item).day, key(item).ingested_ms, key(item).id))
    return [ordered[i : i + k] for i in range(0, len(ordered), k)]


def cited_chunks(cited: list[int], batch: list[M2Snippet], subject_id: str, object_id: str) -> list[Chunk]:
    """The cited snippets (1-based) that exist in the batch and whose chunk is linked to both entities."""
    valid: list[Chunk] = []
    for number in sorted(set(cited)):
        if 1 <= number <= len(batch) and {subject_id, object_id} <= batch[number - 1].entity_ids:
            valid.append(batch[number - 1].chunk)
    return valid


def run_m2(client: LLMClient, subject: EntityRef, obj: EntityRef, batch: list[M2Snippet]) -> M2Answer:
    """One call for (subject, object, k marked chunks in time order). Each answer line is dated on the distinct
    days of the valid chunks it cites (NEON's R = ∪_{t ∈ T'} (t, NEI(s, o)) with T' the cited chunks' days), with
    those chunks' articles and sources, and visible only once every cited chunk is (its text was read off all of
    them); a line citing no valid chunk is dropped and counted."""
    snippets = [(day_words(s.chunk.day), s.marked) for s in batch]
    answer = client.complete(m2_pair.build(subject.name, obj.name, snippets))
    if answer is None:
        return M2Answer(parsed=False)
    result = M2Answer(parsed=True)
    for line in answer.interactions:
        evidence = cited_chunks(line.chunks, batch, subject.entity_id, obj.entity_id)
        if not evidence:
            result.lines_dropped += 1
            continue
        result.lines_kept += 1
        for day in sorted({c.day for c in evidence}):
            same_day = [c for c in evidence if c.day == day]
            result.interactions.append(
                make_day_interaction(same_day, subject, obj, line.text, day, Variant.M2, read=evidence)
            )
    client.count(m2_pair.NAME, "lines_kept", result.lines_kept)
    client.count(m2_pair.NAME, "lines_dropped_uncited", result.lines_dropped)
    return result
