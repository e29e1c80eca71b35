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
from typing import Any

from graph.connection import GraphConnection

# Recount the (entity, day, ingested day) cells the given chunks are counted in now or were counted in before.
RECOUNT_ENTITY_DAYS = """
UNWIND $chunk_ids AS cid
MATCH (ch:Chunk {id: cid})-[r:MENTIONS]->(e:Entity)
WITH e, collect([ch.day, ch.ingested_day]) + collect([r.day, r.ingested_day]) AS cells
UNWIND cells AS cell
WITH DISTINCT e, cell[0] AS day, cell[1] AS ingested_day
WHERE day IS NOT NULL AND ingested_day IS NOT NULL
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WHERE c.day = day AND c.ingested_day = ingested_day
WITH e, day, ingested_day, count(DISTINCT c) AS n
MERGE (d:EntityDay {id: e.id + '|' + toString(day) + '|' + toString(ingested_day)})
SET d.entity_id = e.id, d.day = day, d.ingested_day = ingested_day, d.chunks = n
"""

MARK_COUNTED = """
UNWIND $chunk_ids AS cid
MATCH (ch:Chunk {id: cid})-[r:MENTIONS]->(:Entity)
SET r.day = ch.day, r.ingested_day = ch.ingested_day
"""

# Term frequency in a window of publication days, as of an ingestion day (ingested on or before it).
WINDOW_COUNTS = """
MATCH (d:EntityDay)
WHERE d.day >= $from_day AND d.day <= $to_day AND d.ingested_day <= $ingested_by AND d.chunks > 0
RETURN d.entity_id AS entity, sum(d.chunks) AS chunks
"""

# Document frequency (days as documents) of the candidates, and the number of days, up to the window's end.
DAYS_MENTIONED = """
UNWIND $entities AS eid
MATCH (d:EntityDay {entity_id: eid})
WHERE d.day <= $to_day AND d.ingested_day <= $ingested_by AND d.chunks > 0
RETURN eid AS entity, count(DISTINCT d.day) AS days
"""

DAYS_WITH_MENTIONS = """
MATCH (d:EntityDay)
WHERE d.day <= $to_day AND d.ingested_day <= $ingested_by AND d.chunks > 0
RETURN count(DISTINCT d.day) AS days
"""

# Co-occurrence of each subject with other entities in chunks of the window, as of an ingestion day.
PAIR_COUNTS = """
UNWIND $subjects AS sid
MATCH (:Entity {id: sid})<-[:MENTIONS]-(c:Chunk)
WHERE c.day >= $from_day AND c.day <= $to_day AND c.ingested_day <= $ingested_by
MATCH (c)-[:MENTIONS]->(o:Entity)
WHERE o.id <> sid
RETURN sid AS subject, o.id AS object, count(DISTINCT c) AS chunks
"""

DAILY_COUNTS = """
MATCH (d:EntityDay {entity_id: $entity})
WHERE d.day >= $from_day AND d.day <= $to_day AND d.ingested_day <= $as_of_day
RETURN d.day AS day, sum(d.chunks) AS chunks
ORDER BY day
"""

DAY_RANGE = """
MATCH (d:EntityDay)
WHERE d.chunks > 0 AND d.ingested_day <= $as_of_day
RETURN min(d.day) AS first, max(d.day) AS last
"""

# Entities with when they were first seen, for the linker's alias index at start (as-of linking).
ENTITIES_FIRST_SEEN = """
MATCH (n:Entity)
OPTIONAL MATCH (c:Chunk)-[:MENTIONS]->(n)
RETURN n.id AS id, n.name AS name, n.type AS type, n.aliases AS aliases, n.description AS description,
       count(c) AS mentions, min(c.day) AS first_day, min(c.ingested_ms) AS first_ingested_ms
ORDER BY id
"""


def ingested_day(ingested_ms: int) -> int:
    """The UTC day (yyyymmdd) of an ingestion instant."""
    d = dt.datetime.fromtimestamp(ingested_ms / 1000, dt.UTC)
    return d.year * 10000 + d.month * 100 + d.day


def recount_statements(chunk_ids: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """The writes that bring the counts of these chunks' entities up to date (after MENTIONS are written)."""
    if not chunk_ids:
        return []
    params = {"chunk_ids": sorted(set(chunk_ids))}
    return [(RECOUNT_ENTITY_DAYS, params), (MARK_COUNTED, params)]


def window_counts(conn: GraphConnection, from_day: int, to_day: int, ingested_by: int) -> dict[str, int]:
    rows = conn.read(WINDOW_COUNTS, {"from_day": from_day, "to_day": to_day, "ingested_by": ingested_by})
    return {r["entity"]: r["chunks"] for r in rows}


def days_mentioned(
    conn: GraphConnection, entities: list[str], to_day: int, ingested_by: int
) -> tuple[dict[str, int], int]:
    """(entity → days it was mentioned on, days with any mention), up to to_day, ingested by ingested_by."""
    params = {"entities": sorted(entities), "to_day": to_day, "ingested_by": ingested_by}
    per_entity = {r["entity"]: r["days"] for r in conn.read(DAYS_MENTIONED, params)} if entities else {}
    return per_entity, conn.read(DAYS_WITH_MENTIONS, params)[0]["days"]


def pair_counts(
    conn: GraphConnection, subjects: list[str], from_day: int, to_day: int, ingested_by: int
) -> dict[tuple[str, str], int]:
    if not subjects:
        return {}
    rows = conn.read(
        PAIR_COUNTS, {"subjects": sorted(subjects), "from_day": from_day, "to_day": to_day, "ingested_by": ingested_by}
    )
    return {(r["subject"], r["object"]): r["chunks"] for r in rows}


def daily_counts(
    conn: GraphConnection, entity_id: str, from_day: int, to_day: int, as_of_day: int = 99991231
) -> dict[int, int]:
    """Day → chunks mentioning the entity that day, as known by the end of as_of_day (for spike detection)."""
    rows = conn.read(
        DAILY_COUNTS, {"entity": entity_id, "from_day": from_day, "to_day": to_day, "as_of_day": as_of_day}
    )
    return {r["day"]: r["chunks"] for r in rows}


def day_range(conn: GraphConnection, as_of_day: int = 99991231) -> tuple[int, int] | None:
    """(first, last) publication day with any counted mention, as known by the end of as_of_day; None if none."""
    rows = conn.read(DAY_RANGE, {"as_of_day": as_of_day})
    if not rows or rows[0]["first"] is None:
        return None
    return int(rows[0]["first"]), int(rows[0]["last"])


def entities_first_seen(conn: GraphConnection) -> list[dict[str, Any]]:
    return conn.read(ENTITIES_FIRST_SEEN)
