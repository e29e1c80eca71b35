"""Per-entity daily mention counts kept in the graph, and the reads of them.

`(:EntityDay {id, entity_id, day, ingested_day, chunks})`: how many distinct chunks published on `day` and first
ingested on `ingested_day` mention the entity. The count is recomputed from the MENTIONS edges of the days a
batch touched (never incremented), so a re-delivered batch, a replay or two replicas writing at once leave the
same number; a chunk whose first publication or ingestion moves earlier (graph/store/writes.py CHUNKS) is
recounted under its new days and uncounted from the old ones (the MENTIONS edge remembers where it was counted).

Reads: the extract stage's TF-IDF subject selection (extract/openie/targets.py), as of a chunk; the spike
detection reads `daily_counts` per entity per day."""

from __future__ import annotations

import datetime as dt

from newskg.graph.connection import GraphConnection
from newskg.graph.connection.base import Statement
from newskg.graph.store import reads
from newskg.graph.store.rows import (
    DailyChunks,
    DayCount,
    EntityChunkCount,
    EntityDayCount,
    EntityFirstSeen,
    PairChunkCount,
    row_of,
    rows_of,
)

# Recount the (entity, day, ingested day) cells the given chunks are counted in now or were counted in before.
# Each touched entity's mentions are walked once (its chunks' cells, one per MENTIONS edge: MERGE keeps one edge per
# chunk and entity) and counted for each touched cell (a cell no chunk is in any more counts 0); walking them once
# per touched cell cost as many times as the entity had touched cells. The count is set in the MERGE itself (a
# separate filtered SET was a second pass over every cell, ~10% of the statement on FalkorDB).
RECOUNT_ENTITY_DAYS = """
UNWIND $chunk_ids AS cid
MATCH (ch:Chunk {id: cid})-[r:MENTIONS]->(e:Entity)
WITH e, collect([ch.day, ch.ingested_day]) + collect([r.day, r.ingested_day]) AS touched
UNWIND touched AS cell
WITH DISTINCT e, cell
WHERE cell[0] IS NOT NULL AND cell[1] IS NOT NULL
WITH e, collect(cell) AS cells
WITH e, cells, [(e)<-[:MENTIONS]-(c:Chunk) | [c.day, c.ingested_day]] AS mentioned
UNWIND cells AS cell
WITH e, cell[0] AS day, cell[1] AS ingested_day,
     size([m IN mentioned WHERE m[0] = cell[0] AND m[1] = cell[1]]) AS n
MERGE (d:EntityDay {id: e.id + '|' + toString(day) + '|' + toString(ingested_day)})
  ON CREATE SET d.entity_id = e.id, d.day = day, d.ingested_day = ingested_day, d.chunks = n
  ON MATCH SET d.chunks = n
"""

MARK_COUNTED = """
UNWIND $chunk_ids AS cid
MATCH (ch:Chunk {id: cid})-[r:MENTIONS]->(:Entity)
SET r.day = ch.day, r.ingested_day = ch.ingested_day
"""

# Every cell of the graph at once, as RECOUNT_ENTITY_DAYS and MARK_COUNTED leave them (a graph loaded without the
# write path's recount: the QA bench, bench/qa_graph.py). Needs the EntityDay id index (init makes it): each MERGE
# would otherwise scan every cell made before it.
COUNT_ALL_ENTITY_DAYS = """
MATCH (ch:Chunk)-[:MENTIONS]->(e:Entity)
WHERE ch.day IS NOT NULL AND ch.ingested_day IS NOT NULL
WITH e, ch.day AS day, ch.ingested_day AS ingested_day, count(DISTINCT ch) AS n
MERGE (d:EntityDay {id: e.id + '|' + toString(day) + '|' + toString(ingested_day)})
  ON CREATE SET d.entity_id = e.id, d.day = day, d.ingested_day = ingested_day, d.chunks = n
  ON MATCH SET d.chunks = n
"""

MARK_ALL_COUNTED = """
MATCH (ch:Chunk)-[r:MENTIONS]->(:Entity)
SET r.day = ch.day, r.ingested_day = ch.ingested_day
"""

# The chunks among these whose MENTIONS edges are in the graph (what the recount counts them from).
COUNTED_CHUNKS = """
UNWIND $chunk_ids AS cid
MATCH (ch:Chunk {id: cid})-[:MENTIONS]->(:Entity)
RETURN DISTINCT ch.id AS id
"""


def counted(conn: GraphConnection, chunk_ids: list[str]) -> set[str]:
    """The chunks among these that the daily counts count: those whose mentions are in the graph, recounted first
    (idempotent), since a write cut between the MENTIONS statement and the recount leaves them in the graph but
    not yet in the counts. A chunk id is counted once whatever its records: what is not returned here is for the
    caller to count as pending (extract/openie/targets.py)."""
    ids = sorted(set(chunk_ids))
    found = sorted({str(r["id"]) for r in conn.read(COUNTED_CHUNKS, {"chunk_ids": ids})}) if ids else []
    if found:
        conn.run_many(recount_statements(found))
    return set(found)


def ingested_day(ingested_ms: int) -> int:
    """The UTC day (yyyymmdd) of an ingestion instant."""
    d = dt.datetime.fromtimestamp(ingested_ms / 1000, dt.UTC)
    return d.year * 10000 + d.month * 100 + d.day


def recount_statements(chunk_ids: list[str]) -> list[Statement]:
    """The writes that bring the counts of these chunks' entities up to date (after MENTIONS are written)."""
    if not chunk_ids:
        return []
    params: dict[str, object] = {"chunk_ids": sorted(set(chunk_ids))}
    return [(RECOUNT_ENTITY_DAYS, params), (MARK_COUNTED, params)]


def window_counts(conn: GraphConnection, from_day: int, to_day: int, ingested_by: int) -> dict[str, int]:
    rows = conn.read(reads.WINDOW_COUNTS, {"from_day": from_day, "to_day": to_day, "ingested_by": ingested_by})
    return {r.entity: r.chunks for r in rows_of(EntityChunkCount, rows)}


def days_mentioned(
    conn: GraphConnection, entities: list[str], to_day: int, ingested_by: int
) -> tuple[dict[str, int], int]:
    """(entity → days it was mentioned on, days with any mention), up to to_day, ingested by ingested_by."""
    params = {"entities": sorted(entities), "to_day": to_day, "ingested_by": ingested_by}
    per_entity = (
        {r.entity: r.days for r in rows_of(EntityDayCount, conn.read(reads.DAYS_MENTIONED, params))} if entities else {}
    )
    return per_entity, row_of(DayCount, conn.read(reads.DAYS_WITH_MENTIONS, params)[0]).days


def pair_counts(
    conn: GraphConnection, subjects: list[str], from_day: int, to_day: int, ingested_by: int
) -> dict[tuple[str, str], int]:
    if not subjects:
        return {}
    rows = conn.read(
        reads.PAIR_COUNTS,
        {"subjects": sorted(subjects), "from_day": from_day, "to_day": to_day, "ingested_by": ingested_by},
    )
    return {(r.subject, r.object): r.chunks for r in rows_of(PairChunkCount, rows)}


def daily_counts(
    conn: GraphConnection, entity_id: str, from_day: int, to_day: int, as_of_day: int = 99991231
) -> dict[int, int]:
    """Day → chunks mentioning the entity that day, as known by the end of as_of_day (for spike detection)."""
    rows = conn.read(
        reads.DAILY_COUNTS, {"entity": entity_id, "from_day": from_day, "to_day": to_day, "as_of_day": as_of_day}
    )
    return {r.day: r.chunks for r in rows_of(DailyChunks, rows)}


def day_range(conn: GraphConnection, as_of_day: int = 99991231) -> tuple[int, int] | None:
    """(first, last) publication day with any counted mention, as known by the end of as_of_day; None if none."""
    rows = conn.read(reads.DAY_RANGE, {"as_of_day": as_of_day})
    if not rows or rows[0]["first"] is None:
        return None
    return _as_int(rows[0]["first"]), _as_int(rows[0]["last"])


def _as_int(value: object) -> int:
    if not isinstance(value, int):
        raise TypeError(f"a day key must be an integer, not {value!r}")
    return value


def entities_first_seen(conn: GraphConnection) -> list[EntityFirstSeen]:
    return rows_of(EntityFirstSeen, conn.read(reads.ENTITIES_FIRST_SEEN))
