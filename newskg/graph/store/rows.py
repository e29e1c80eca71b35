"""Typed rows of the store's reads: what GraphStore and graph/store/mentions.py hand to qa/, evaluation/ and the
CLI instead of dicts. Field names are the RETURN column names of the queries in graph/store/reads.py.

A connection returns `dict[str, object]` (graph/connection/base.py); `rows_of` validates those dicts into one of
these types at the seam (pydantic, lax mode: ints stay ints, a wrong type or missing column fails loudly here
instead of later in a caller)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from pydantic import TypeAdapter

from newskg.core.records import Chunk, Variant
from newskg.graph.connection.base import Row
from newskg.graph.store.reads import ALIAS_CAP

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

R = TypeVar("R")

Cell = tuple[int, int, int]  # (publication day, ingestion day, how many items share them): yyyymmdd days


@dataclass(frozen=True)
class EntityCounts:
    """An entity as of a day: its popularity then (reads.ENTITY_VISIBLE)."""

    id: str
    name: str
    type: str
    mentions: int
    interactions: int


@dataclass(frozen=True)
class EntityAsOf(EntityCounts):
    """reads.ENTITY_FIND, reads.ENTITIES_AS_OF: an entity as of a day, with its aliases visible then (the first
    ALIAS_CAP in code-point order: the read collects them unordered)."""

    aliases: list[str] | None

    def __post_init__(self) -> None:
        object.__setattr__(self, "aliases", shown_aliases(self.aliases))


def shown_aliases(aliases: list[str] | None) -> list[str]:
    """The aliases an entity shows: the first ALIAS_CAP in code-point order (a read collects them unordered)."""
    return sorted(aliases or [])[:ALIAS_CAP]


AliasSeen = tuple[str, int, int]  # (spelling, publication day, ingestion ms) of an alias's first record


@dataclass(frozen=True)
class EntityName:
    """reads.ENTITY_NAMES: an entity's name (visible with the entity) and its dated aliases."""

    id: str
    name: str
    aliases: list[AliasSeen] | None


@dataclass(frozen=True)
class EntityProfileRow:
    """reads.ENTITY_PROFILES: (day, ingestion day, count) cells of an entity's chunks and interactions."""

    id: str
    name: str
    type: str
    chunk_cells: list[Cell]
    interaction_cells: list[Cell]


@dataclass(frozen=True)
class TopEntity:
    """reads.TOP_ENTITIES."""

    id: str
    name: str
    type: str
    interactions: int
    first_day: int
    last_day: int


@dataclass(frozen=True)
class TimelineRow:
    """reads.TIMELINE: a visible interaction with the sources and urls that had reported it by the as-of day."""

    id: str
    text: str
    event_day: int
    event_iso: str | None
    published_day: int
    ingested_at: str | None
    ingested_ms: int
    variant: Variant | None
    confidence: float | None  # an M0 fact's (extract/openie/confidence.py); None for an LLM's
    subject_id: str
    object_id: str | None
    sources: list[str]
    n_sources: int
    urls: list[str]
    lead: int | None = None  # the first sentence of its article its earliest chunk starts at (0: the lead chunk)


@dataclass(frozen=True)
class EntityChunk:
    """reads.ENTITY_CHUNKS."""

    id: str
    text: str
    day: int


@dataclass(frozen=True)
class InteractionSource:
    """reads.INTERACTION_SOURCES: one article that reported an interaction."""

    source: str
    url: str | None
    title: str | None
    published_day: int
    chunk_id: str


@dataclass(frozen=True)
class EvidenceSources:
    """reads.INTERACTION_SOURCES_AS_OF, reads.CHUNK_SOURCES_AS_OF."""

    id: str
    sources: list[str]
    urls: list[str]


@dataclass(frozen=True)
class LateCounts:
    """reads.LATE_FOR_ENTITY, reads.LATE_IN_GRAPH: what the strict view of a day hides."""

    facts: int
    chunks: int
    first_ingested_ms: int | None


@dataclass(frozen=True)
class StoredJournal:
    """reads.JOURNALS_PAGE: one chunk record's linking journal, as written (graph/store/journals.py)."""

    id: str
    order: int
    body: str


@dataclass(frozen=True)
class WrittenChunkParts:
    """reads.WRITTEN_CHUNK_PARTS: a chunk's mentioned entities and the interactions it states."""

    id: str
    entity_ids: list[str]
    interaction_ids: list[str]


@dataclass(frozen=True)
class EntityFirstSeen:
    """reads.ENTITIES_FIRST_SEEN: the linker's alias index at start."""

    id: str
    name: str
    type: str
    aliases: list[str] | None
    description: str | None
    mentions: int
    first_day: int | None
    first_ingested_ms: int | None


@dataclass(frozen=True)
class PendingChunk:
    """reads.M2_PENDING: a chunk of a pair no M2 batch has covered yet, with the entities it is linked to."""

    id: str
    text: str
    marked: str | None
    day: int
    published: str
    ingested_at: str
    ingested_ms: int
    article_id: str
    source: str
    source_id: str
    url: str | None
    title: str | None
    sentence_start: int
    sentence_end: int
    entity_ids: list[str] | None


@dataclass(frozen=True)
class StoredChunk:
    """reads.CHUNKS_BY_ID: a chunk node with every article, source and entity it hangs on (for the mirror)."""

    id: str
    text: str
    day: int
    published: str
    ingested_at: str
    ingested_ms: int
    article_id: str
    article_ids: list[str]
    source_ids: list[str]
    source_names: list[str]
    url: str | None
    title: str | None
    sentence_start: int
    sentence_end: int
    entity_ids: list[str]


def chunk_of(r: PendingChunk | StoredChunk, article_ids: list[str], source: str, source_id: str) -> Chunk:
    """A Chunk record rebuilt from a chunk node (M2 batches and the mirror read chunks back from the graph)."""
    return Chunk(
        id=r.id,
        text=r.text,
        sentences=[],
        article_id=r.article_id,
        article_ids=article_ids,
        **Chunk.provenance_of(r, source=source, source_id=source_id),
        sentence_start=r.sentence_start,
        sentence_end=r.sentence_end,
    )


@cache
def _adapter(row_type: type[R]) -> TypeAdapter[R]:
    return TypeAdapter(row_type)


def rows_of(row_type: type[R], rows: Sequence[Row]) -> list[R]:
    """The connection's rows as `row_type`."""
    adapter = _adapter(row_type)
    return [adapter.validate_python(row) for row in rows]


def row_of(row_type: type[R], row: Row) -> R:
    return _adapter(row_type).validate_python(row)


def as_dict(row: DataclassInstance) -> dict[str, object]:
    """A row as the JSON object the API and the CLI print (the same keys as the query's columns)."""
    return asdict(row)


# --- Small rows of counts and ids (graph/store/mentions.py, GraphStore.counts / ids / m2_open_pairs).
@dataclass(frozen=True)
class Count:
    n: int


@dataclass(frozen=True)
class IdRow:
    id: str


@dataclass(frozen=True)
class OpenPair:
    subject_id: str
    object_id: str


@dataclass(frozen=True)
class EntityChunkCount:
    entity: str
    chunks: int


@dataclass(frozen=True)
class EntityDayCount:
    entity: str
    days: int


@dataclass(frozen=True)
class DayCount:
    days: int


@dataclass(frozen=True)
class PairChunkCount:
    subject: str
    object: str
    chunks: int


@dataclass(frozen=True)
class DailyChunks:
    day: int
    chunks: int
