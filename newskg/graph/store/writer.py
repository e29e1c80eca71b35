"""The extract stage's writes: one batch of extraction results → one unit of idempotent upserts. Rows are plain
dicts built from the shared records, so the store knows nothing of extraction. One of the three users of the graph
store (graph/store/store.py)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict
from typing import Any, TypedDict, Unpack

from newskg.core.ids import digest
from newskg.core.records import Chunk, ChunkSighting, Entity, Interaction
from newskg.core.timeaxes import day_iso
from newskg.graph.connection import GraphConnection
from newskg.graph.store import factbounds, factdays, writes
from newskg.graph.store.journals import JournalRow
from newskg.graph.store.mentions import ingested_day, recount_statements
from newskg.graph.store.schema import init_schema


class BatchParts(TypedDict, total=False):
    """What one consumer batch produced, each part optional and passed by keyword to `GraphWriter.write_batch`."""

    chunks: Iterable[Chunk]
    sightings: Iterable[ChunkSighting]
    entities: Iterable[Entity]
    mentions: Iterable[tuple[str, str]]  # (chunk id, entity id)
    interactions: Iterable[Interaction]
    marked: dict[str, str] | None  # chunk id → the chunk's text with its entities `<e>`-marked
    m2_batches: Iterable[tuple[str, list[str]]]  # (pair key, chunk ids) an M2 call has covered
    # the linker's journals of the chunks, written after everything else (graph/store/journals.py), so a journal in
    # the graph means its chunk was written whole (FalkorDB runs the statements in order)
    journals: Iterable[JournalRow]


ALWAYS_SEEN = (0, 0)  # an entity record given without a time (KB, fixtures): visible always, first of all


def _article_row(item: Chunk | ChunkSighting) -> dict[str, Any]:
    article_id = item.article_id
    return {
        "id": article_id,
        **item.provenance(),
        "first_key": first_key(
            item.day, item.ingested_ms, item.published, content_tie(article_id, item.url, item.title, item.source)
        ),
    }


def _chunk_row(chunk: Chunk, marked: str | None) -> dict[str, Any]:
    return {
        "id": chunk.id,
        "text": chunk.text,
        **chunk.provenance(),
        "ingested_day": ingested_day(chunk.ingested_ms),
        "sentence_start": chunk.sentence_start,
        "sentence_end": chunk.sentence_end,
        "article_id": chunk.article_id,
        "marked": marked,
        "first_key": first_key(
            chunk.day,
            chunk.ingested_ms,
            chunk.published,
            content_tie(
                chunk.article_id, chunk.text, chunk.source, chunk.url, chunk.title, chunk.sentence_start, marked
            ),
        ),
    }


def _sighting_row(s: ChunkSighting) -> dict[str, Any]:
    # A sighting may arrive before its kept chunk (another partition): MERGE makes the node, the chunk fills it.
    return {
        "id": s.chunk_id,
        "text": None,
        "day": None,
        "published": None,
        "ingested_ms": None,
        "sentence_start": None,
        "sentence_end": None,
        "article_id": s.article_id,
        "similarity": s.similarity,
    }


def _interaction_row(i: Interaction) -> dict[str, Any]:
    """What writes.INTERACTIONS reads of an interaction, and no more: every byte is sent and parsed per statement."""
    return {
        "id": i.id,
        "subject_id": i.subject_id,
        "object_id": i.object_id,
        "text": i.text,
        "event_day": i.event_day,
        "event_iso": day_iso(i.event_day),
        "variant": i.variant,
        "published_day": i.published_day,
        "published_iso": day_iso(i.published_day),
        "ingested_ms": i.ingested_ms,
        "ingested_day": ingested_day(i.ingested_ms),  # its cell in the daily fact counts (graph/store/factdays.py)
        "ingested_at": i.ingested_at,
        "chunk_ids": i.chunk_ids,
        "first_key": interaction_first_key(i),
        "confidence": i.confidence,
    }


def first_key(published_day: int, ingested_ms: int, published: str = "", tie: str = "") -> str:
    """Orders the records of one content id by when the system could first show them: the day a record became
    visible as of the `ingested` view (the later of its published day and its ingestion day), then its published
    day, published instant, ingestion instant and a tie id. One string, so the graph compares it in one `<` on
    Neo4j and FalkorDB alike; fixed-width numbers keep string order equal to numeric order."""
    visible_day = max(published_day, ingested_day(ingested_ms))
    return f"{visible_day:08d}|{published_day:08d}|{published}|{ingested_ms:015d}|{tie}"


def content_tie(record_id: str, *values: object) -> str:
    """A first_key tie of a record id and a digest of what the record sets: two records of one node at the same
    instant (a refetch with another title, a chunk re-marked) keep the same one whichever arrives first."""
    return f"{record_id}|{digest('tie', *('' if v is None else str(v) for v in values))}"


def interaction_first_key(i: Interaction) -> str:
    """Its text breaks a tie: two spellings of one fact (the id holds it normalised) at the same instant keep the
    same text whichever arrives first; then its confidence, the higher first: one sentence read in two overlapping
    chunks of an article (one instant, one text) can parse a little differently in each, and the graph kept the
    confidence of whichever chunk came first (19 of ~1,840 exported lines differed between partition
    interleavings, issue 29)."""
    trust = "" if i.confidence is None else f"{1 - i.confidence:.6f}"
    return first_key(i.published_day, i.ingested_ms, tie=f"{i.text}|{trust}")


def fold_chunk_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per chunk (or article) id, as writes.CHUNKS (writes.ARTICLES) would leave the node after all of
    them (rows of one statement do not see each other's writes): the row with the least first_key, whole."""
    folded: dict[str, dict[str, Any]] = {}
    for row in rows:
        kept = folded.get(row["id"])
        folded[row["id"]] = row if kept is None else min(kept, row, key=lambda r: r["first_key"])
    return list(folded.values())


def least_source_names(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each article row names its source by the least spelling of that source id in the batch: the rows of one
    statement do not see each other's writes, so writes.ARTICLES alone would keep the batch's last."""
    least: dict[str, str] = {}
    for row in rows:
        least[row["source_id"]] = min(least.get(row["source_id"], row["source"]), row["source"])
    return [row | {"source": least[row["source_id"]]} for row in rows]


def fold_interactions(interactions: Iterable[Interaction]) -> list[Interaction]:
    """One record per interaction id: evidence, articles and sources united, the record visible first (least
    first_key) kept whole otherwise, its times, text and confidence (the same fact read in two overlapping chunks of
    one batch keeps both as evidence), in any order of the batch."""
    folded: dict[str, Interaction] = {}
    for i in interactions:
        kept = folded.get(i.id)
        if kept is None:
            folded[i.id] = i
            continue
        earliest = min(kept, i, key=interaction_first_key)
        folded[i.id] = earliest.model_copy(
            update={
                "chunk_ids": sorted({*kept.chunk_ids, *i.chunk_ids}),
                "article_ids": sorted({*kept.article_ids, *i.article_ids}),
                "source_ids": sorted({*kept.source_ids, *i.source_ids}),
            }
        )
    return list(folded.values())


def _with_articles(chunk_rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """fold_chunk_rows, each kept row carrying the IN edge of every record of its id (writes.CHUNKS `articles`),
    in batch order: one statement writes the node and its edges."""
    articles: dict[str, list[dict[str, Any]]] = {}
    for row in chunk_rows:
        # similarity 1: a kept chunk is its article's own text (a sighting's is its measured similarity)
        edge = {
            "article_id": row["article_id"],
            "day": row["day"],
            "ingested_ms": row["ingested_ms"],
            "similarity": 1.0,
        }
        articles.setdefault(row["id"], []).append(edge)
    return [row | {"articles": articles[row["id"]]} for row in fold_chunk_rows(chunk_rows)]


def _mention_rows(mentions: Iterable[tuple[str, str]]) -> list[dict[str, Any]]:
    """One row per chunk with the ids of the entities it mentions (writes.MENTIONS), duplicates dropped, sorted."""
    by_chunk: dict[str, list[str]] = {}
    for chunk_id, entity_id in sorted(set(mentions)):
        by_chunk.setdefault(chunk_id, []).append(entity_id)
    return [{"chunk_id": c, "entity_ids": ids} for c, ids in by_chunk.items()]


def alias_id(entity_id: str, alias: str) -> str:
    """One Alias node per (entity, exact spelling)."""
    return "al_" + digest(entity_id, alias)


def _entity_rows(entities: Iterable[Entity]) -> list[dict[str, Any]]:
    """One row per entity id, as writes.ENTITIES would leave the node after every record of the batch (rows of
    one statement do not see each other's writes): the type of the record visible first (least `type_key`), the
    name of the record visible first among those that spelled it (`name_key`), and each alias with the times of
    its record visible first. Keys are store.first_key of the record's times, its value breaking a tie."""
    rows: dict[str, dict[str, Any]] = {}
    aliases: dict[str, dict[str, dict[str, Any]]] = {}
    for e in entities:
        day, ms = e.seen or ALWAYS_SEEN
        type_key = first_key(day, ms, tie=e.type)
        name_key = first_key(day, ms, tie=e.name) if e.spelled else None
        row = rows.get(e.id)
        if row is None:
            row = rows[e.id] = {"id": e.id, "name": e.name, "type": e.type, "type_key": type_key, "name_key": None}
            row["description"] = e.description
        row["description"] = row["description"] or e.description
        if type_key < row["type_key"]:
            row["type"], row["type_key"] = e.type, type_key
        if name_key is not None and (row["name_key"] is None or name_key < row["name_key"]):
            row["name"], row["name_key"] = e.name, name_key
        for alias in e.aliases:
            alias_day, alias_ms = e.alias_seen.get(alias, (day, ms))
            key = first_key(alias_day, alias_ms)
            kept = aliases.setdefault(e.id, {}).get(alias)
            if kept is None or key < kept["first_key"]:
                aliases[e.id][alias] = {
                    "id": alias_id(e.id, alias),
                    "name": alias,
                    "day": alias_day,
                    "ingested_ms": alias_ms,
                    "first_key": key,
                }
    return [
        row | {"aliases": [aliases[entity_id][a] for a in sorted(aliases.get(entity_id, {}))]}
        for entity_id, row in rows.items()
    ]


class GraphWriter:
    """Writes over one connection: the schema, and each consumer batch as one unit."""

    def __init__(self, conn: GraphConnection):
        self.conn = conn

    def init(self) -> list[str]:
        return init_schema(self.conn)

    def write_batch(self, **parts: Unpack[BatchParts]) -> None:
        """Everything one consumer batch produced (`BatchParts`), as one unit; safe to repeat (all MERGE)."""
        chunks, sightings = list(parts.get("chunks", ())), list(parts.get("sightings", ()))
        interactions, marked = list(parts.get("interactions", ())), parts.get("marked") or {}
        # names first: folding keeps one row per article, and a source's other spellings are in the rows it drops
        articles = fold_chunk_rows(least_source_names([_article_row(item) for item in [*chunks, *sightings]]))
        chunk_rows = _with_articles([_chunk_row(c, marked.get(c.id)) for c in chunks])
        batch_rows = [
            {"id": "m2_" + digest(pair, *ids), "pair": pair, "chunk_ids": ids}
            for pair, ids in parts.get("m2_batches", ())
        ]
        sighting_rows = [_sighting_row(s) for s in sightings]
        entity_rows = _entity_rows(parts.get("entities", ()))
        mention_rows = _mention_rows(parts.get("mentions", ()))
        interaction_rows = [_interaction_row(i) for i in fold_interactions(interactions)]
        statements = [
            (writes.ARTICLES, articles),
            (writes.CHUNKS, chunk_rows),
            (writes.SIGHTING_CHUNKS, sighting_rows),
            (writes.ENTITIES, entity_rows),
            (writes.MENTIONS, mention_rows),
            (writes.INTERACTIONS, interaction_rows),
            (writes.M2_BATCHES, batch_rows),
        ]
        journal_rows = [asdict(j) for j in parts.get("journals", ())]
        self.conn.run_many(
            [(query, {"rows": rows}) for query, rows in statements if rows]
            # the daily mention counts of what this batch mentions, recounted from the graph; and of the chunks it
            # writes: a record that re-dates a chunk moves the chunk's counted mentions even when its batch sends none
            + recount_statements([row["chunk_id"] for row in mention_rows] + [row["id"] for row in chunk_rows])
            # the daily fact counts of the cells this batch's interactions are in or leave, and their entities' totals
            + factdays.recount_statements(
                [row["id"] for row in interaction_rows], _entity_ids(entity_rows, interactions)
            )
            # the salience bounds of the facts it writes and of those its articles carry (a new source, chunk or lead)
            + factbounds.recount_statements([row["id"] for row in interaction_rows], [row["id"] for row in articles])
            + ([(writes.LINKING_JOURNALS, {"rows": journal_rows})] if journal_rows else [])
        )


def _entity_ids(entity_rows: list[dict[str, Any]], interactions: list[Interaction]) -> list[str]:
    """The entities whose fact totals a batch may change: those its interactions name, and those it writes (an
    entity may be written after its facts)."""
    named = [i for x in interactions for i in (x.subject_id, x.object_id) if i]
    return [row["id"] for row in entity_rows] + named
