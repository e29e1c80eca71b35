"""One consumer batch that fills every write statement of GraphStore.write_batch (articles, chunks, sightings,
entities with aliases and a description, mentions, interactions with objects, an M2 batch), for the tests that
look at what the write path sends: the Bolt unit tests (a scripted driver) and the Neo4j dialect trace (FalkorDB)."""

from __future__ import annotations

from dataclasses import dataclass, field

from newskg.core.ids import source_id
from newskg.core.records import Chunk, ChunkSighting, Entity, Interaction
from newskg.extract.entities.journal import ArticleMemory, IndexOp, LinkJournal, journal_id
from newskg.graph.store.journals import JournalRow
from tests.support.records import CHOUPETTE, DOJA, ENTITIES, dated_chunk, doja_and_choupette

ADOPTED = dated_chunk("Doja Cat adopted Choupette on May 1.", 20230501)
DRESSED = dated_chunk("Doja Cat dressed as Choupette at the Met Gala.", 20230502, source="beta", ingested_day=20230503)
PAIR = f"{DOJA}|{CHOUPETTE}"


@dataclass(frozen=True)
class FullBatch:
    chunks: list[Chunk] = field(default_factory=lambda: [ADOPTED, DRESSED])
    sightings: list[ChunkSighting] = field(
        default_factory=lambda: [
            ChunkSighting(
                chunk_id=ADOPTED.id,
                article_id="a_gamma_20230501",
                source="gamma",
                source_id=source_id("gamma"),
                url="https://gamma.example/20230501",
                title="Doja adopts",
                day=20230501,
                published="2023-05-01T09:00:00Z",
                ingested_at="2023-05-01T10:00:00Z",
                ingested_ms=ADOPTED.ingested_ms + 60_000,
                similarity=0.93,
            )
        ]
    )
    entities: list[Entity] = field(
        default_factory=lambda: [ENTITIES[0].model_copy(update={"description": "US singer"}), ENTITIES[1]]
    )
    mentions: list[tuple[str, str]] = field(
        default_factory=lambda: [(c.id, e) for c in (ADOPTED, DRESSED) for e in (DOJA, CHOUPETTE)]
    )
    interactions: list[Interaction] = field(
        default_factory=lambda: [
            doja_and_choupette(ADOPTED, "Doja Cat adopted Choupette", 20230501),
            doja_and_choupette(DRESSED, "Doja Cat dressed as Choupette", 20230502),
        ]
    )
    marked: dict[str, str] = field(
        default_factory=lambda: {ADOPTED.id: "<e>Doja Cat</e> adopted <e>Choupette</e> on May 1."}
    )
    m2_batches: list[tuple[str, list[str]]] = field(default_factory=lambda: [(PAIR, [ADOPTED.id, DRESSED.id])])
    journals: list[JournalRow] = field(default_factory=lambda: [journal_row(ADOPTED, 1), journal_row(DRESSED, 2)])

    def write_kwargs(self) -> dict[str, object]:
        return {
            "chunks": self.chunks,
            "sightings": self.sightings,
            "entities": self.entities,
            "mentions": self.mentions,
            "interactions": self.interactions,
            "marked": self.marked,
            "m2_batches": self.m2_batches,
            "journals": self.journals,
        }


def journal_row(chunk: Chunk, order: int) -> JournalRow:
    """The linker's journal of a chunk that linked Doja Cat (extract/entities/journal.py)."""
    journal = LinkJournal(
        article_id=chunk.article_id,
        seen=(chunk.day, chunk.ingested_ms),
        context=["gala"],
        ops=[IndexOp(op="add", entity_id=DOJA, text="Doja Cat", kind="PERSON")],
        memory=ArticleMemory(linked={"doja cat": DOJA}),
    )
    return JournalRow.of(journal_id(chunk), chunk.id, order, journal.model_dump_json())
