"""Factories of the records the stages exchange (chunks, entities, interactions), for tests that write them
directly, and texts known to trip the extractor."""

from __future__ import annotations

from newskg.core.ids import chunk_id, entity_id, interaction_id, source_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.timeaxes import day_key, end_of_day_ms, epoch_ms, iso, parse_instant

DOJA, CHOUPETTE = entity_id("Doja Cat", "PERSON"), entity_id("Choupette", "PERSON")
ENTITIES = [
    Entity(id=DOJA, name="Doja Cat", type="PERSON", aliases=["Doja"]),
    Entity(id=CHOUPETTE, name="Choupette", type="PERSON"),
]

# A valid chunk (its day is within the schema's range) whose stated date falls before year 1000: the event day
# of its interaction fails the Interaction schema. Found, not injected.
POISON_DAY = 10000105
POISON = "On December 30, Doja Cat met Jared Leto in Paris."


def dated_chunk(
    text: str, day: int, source: str = "alpha", ingested_day: int | None = None, article: str | None = None
) -> Chunk:
    """A one-sentence chunk published on `day` (yyyymmdd, 08:00 UTC) by `source`, ingested an hour before the end
    of `ingested_day` (default: the day it was published)."""
    ingested = ingested_day or day
    article = article or f"a_{source}_{day}"
    return Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source=source,
        source_id=source_id(source),
        url=f"https://{source}.example/{day}",
        title=text[:20],
        day=day,
        published=f"{str(day)[:4]}-{str(day)[4:6]}-{str(day)[6:]}T08:00:00Z",
        ingested_at=f"ingested {ingested}",
        ingested_ms=end_of_day_ms(ingested) - 3_600_000,
        sentence_start=0,
        sentence_end=1,
    )


def linking_chunk(text: str, day: int = 20230505, article: str = "a1", cid: str = "c1", ingested_ms: int = 1) -> Chunk:
    """A chunk for the offline linker and extractor: its day, article, id and ingestion instant are what linking
    as of the chunk reads."""
    return Chunk(
        id=cid,
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source="s",
        source_id="s_1",
        day=day,
        published=f"{str(day)[:4]}-{str(day)[4:6]}-{str(day)[6:]}T00:00:00Z",
        ingested_at="2023-05-05T00:00:00Z",
        ingested_ms=ingested_ms,
        sentence_start=0,
        sentence_end=4,
    )


def published_chunk(text: str, published: str, article: str) -> Chunk:
    """A one-sentence chunk of source alpha, published and ingested at the instant `published`."""
    when = parse_instant(published)
    return Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source="alpha",
        source_id=source_id("alpha"),
        day=day_key(when),
        published=iso(when),
        ingested_at=iso(when),
        ingested_ms=epoch_ms(when),
        sentence_start=0,
        sentence_end=1,
    )


def stated_by(chunk: Chunk, subject: Entity, obj: Entity, text: str, event_day: int) -> Interaction:
    """An M0 interaction subject → object stated by `chunk`, with the chunk's times and provenance."""
    return Interaction(
        id=interaction_id(subject.id, obj.id, text, event_day, "M0"),
        subject_id=subject.id,
        subject_name=subject.name,
        object_id=obj.id,
        object_name=obj.name,
        text=text,
        event_day=event_day,
        published_day=chunk.day,
        ingested_at=chunk.ingested_at,
        ingested_ms=chunk.ingested_ms,
        variant="M0",
        chunk_ids=[chunk.id],
        article_ids=[chunk.article_id],
        source_ids=[chunk.source_id],
    )


def doja_and_choupette(chunk: Chunk, text: str, event_day: int) -> Interaction:
    """An M0 interaction Doja Cat → Choupette stated by `chunk`."""
    return stated_by(chunk, ENTITIES[0], ENTITIES[1], text, event_day)


# Three articles, the first in three chunks: its later chunks name people by surname and first name only, and a
# name's type is voted by its mentions, so what the earlier chunks taught decides how they link (the linking
# journal's tests: unit/test_link_journal.py, integration/test_link_journal_restart.py).
LINKING_STREAM = [
    ("a1", "Doja Cat dressed as Choupette at the Met Gala in New York on Monday. Jared Leto also arrived."),
    ("a1", "Leto posed with Anna Wintour before the dinner, and Karl Lagerfeld's estate sent flowers."),
    ("a1", "Karl's cat Choupette was there too. Wintour praised the theme and Leto thanked the designers."),
    ("a2", "Leto said on Tuesday that Choupette had stolen the show at the gala."),
    ("a3", "Anna Wintour and Doja Cat met Jared Leto in Paris, where Wintour opened an exhibition on Lagerfeld."),
    ("a2", "Choupette Inc., the company behind the costume, said Leto had paid for it."),
]


def linking_stream() -> list[Chunk]:
    return [
        linking_chunk(text, day=20230501 + n, article=article, cid=f"c{n}", ingested_ms=1000 * (n + 1))
        for n, (article, text) in enumerate(LINKING_STREAM)
    ]
