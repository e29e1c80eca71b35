"""Per-entity daily fact counts kept in the graph: what an entity's visibility profile reads
(reads.ENTITY_PROFILES), so the read costs one cell per (publication day, ingestion day) and not one row per fact.

`(:FactDay {id, entity_id, day, ingested_day, facts})`: how many distinct interactions published on `day` and
first ingested on `ingested_day` name the entity (a SUBJECT_OF or OBJECT edge, as reads.ENTITY_VISIBLE counts
them). A label of its own, not EntityDay's, so the readers of the mention counts (spikes, TF-IDF targets, the
explorer) count what they counted.

Each interaction carries its cells as indexed keys, `subject_cell` and `object_cell` ("<entity id>|<published
day>|<ingested day>", set with the edges on every write: writes.INTERACTIONS), so a batch recounts just the
cells it touched by index lookup, in proportion to the cells' facts and never to the entity's degree. Like the
mention counts (graph/store/mentions.py) a cell is recomputed, never incremented, so a redelivery, a replay or
two writers leave the same number; a fact whose first record moves earlier (writes.INTERACTIONS re-dates it) is
recounted in its new cells and uncounted from the old ones, which its mark `counted` ("<published day>|<ingested
day>|<cells>" of what was counted: the cells' entities are the fact's own) remembers until the recount has run (a
crash between the write and the recount leaves it for the redelivery). A short mark, not the cell keys again: a
list of the two keys cost ~150 MB per million facts on FalkorDB. A cell no fact is in any more is
deleted, not kept at 0: the graph then holds the same cells whatever order the records arrived in."""

from __future__ import annotations

from newskg.graph.connection.base import Statement

# The cells the given interactions are in now or were counted in before, each recounted from the facts whose key
# it is (an index lookup per role; a fact naming the entity as subject and object counts once, as the edge walk
# counts it): work in proportion to the touched cells' facts. The cell's entity and days are read off one of its
# facts (every fact of a cell has the same); the cells a fact was counted in are its entities' with the mark's days
# (yyyymmdd keys: 17 characters), its object's even when it had no OBJECT edge then (recounting a cell is harmless).
# A fact is marked with the cells it is counted in by the same statement, so the mark and the counts change
# together (FalkorDB runs a query atomically; Neo4j, the batch's transaction): a fact already counted in the cells
# it is in now (a redelivery, a replay) touches none, and a crash before the statement leaves the old mark for the
# redelivery to uncount. Both updates of a cell are FOREACHes: on
# FalkorDB a `WITH … WHERE n = 0` after the MERGE's FOREACH dropped the MERGE's writes.
RECOUNT_FACT_DAYS = """
UNWIND $ids AS xid
MATCH (x:Interaction {id: xid})
WITH x, [cell IN [x.subject_cell, x.object_cell] WHERE cell IS NOT NULL] AS cells
WITH x, cells, toString(x.published_day) + '|' + toString(x.ingested_day) + '|' + toString(size(cells)) AS mark
WHERE x.counted IS NULL OR x.counted <> mark
WITH x, mark, cells + CASE WHEN x.counted IS NULL THEN [] ELSE
       [x.subject_id + '|' + left(x.counted, 17), x.object_id + '|' + left(x.counted, 17)] END AS touched
SET x.counted = mark
WITH touched
UNWIND touched AS cell
WITH DISTINCT cell
OPTIONAL MATCH (s:Interaction) WHERE s.subject_cell = cell
WITH cell, count(s) AS subjects, min(s.subject_id) AS subject, min(s.published_day) AS s_day,
     min(s.ingested_day) AS s_ingested
OPTIONAL MATCH (o:Interaction) WHERE o.object_cell = cell AND NOT coalesce(o.subject_cell = cell, false)
WITH cell, subjects, subject, s_day, s_ingested, count(o) AS objects, min(o.object_id) AS object,
     min(o.published_day) AS o_day, min(o.ingested_day) AS o_ingested
WITH cell, subjects + objects AS n, coalesce(subject, object) AS entity, coalesce(s_day, o_day) AS day,
     coalesce(s_ingested, o_ingested) AS ingested_day
OPTIONAL MATCH (emptied:FactDay {id: cell})
FOREACH (_ IN CASE WHEN n = 0 AND emptied IS NOT NULL THEN [1] ELSE [] END | DELETE emptied)
FOREACH (_ IN CASE WHEN n > 0 THEN [1] ELSE [] END |
  MERGE (d:FactDay {id: cell})
    ON CREATE SET d.entity_id = entity, d.day = day, d.ingested_day = ingested_day, d.facts = n
    ON MATCH SET d.facts = n)
"""


# --- A graph written before the fact cells (graph/store/schema.py init runs these): the keys the write path sets,
# from the times and edges, then every cell counted from the edges, as the walk the profile read replaced did.
# The UTC day of the ingestion instant (mentions.ingested_day) in the integer arithmetic Neo4j 5 and FalkorDB share:
# civil from days (H. Hinnant; the inverse of reads.day_ordinal), for instants from 1970 on.
BACKFILL_INGESTED_DAY = """
MATCH (x:Interaction) WHERE x.ingested_day IS NULL AND x.ingested_ms IS NOT NULL
WITH x, x.ingested_ms / 86400000 + 719468 AS z
WITH x, z / 146097 AS era, z % 146097 AS doe
WITH x, era, doe, (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365 AS yoe
WITH x, era, yoe, doe - (365 * yoe + yoe / 4 - yoe / 100) AS doy
WITH x, era, yoe, doy, (5 * doy + 2) / 153 AS mp
SET x.ingested_day = (era * 400 + yoe + CASE WHEN mp >= 10 THEN 1 ELSE 0 END) * 10000
    + (CASE WHEN mp < 10 THEN mp + 3 ELSE mp - 9 END) * 100 + doy - (153 * mp + 2) / 5 + 1
"""

BACKFILL_SUBJECT_CELL = """
MATCH (s:Entity)-[:SUBJECT_OF]->(x:Interaction) WHERE x.subject_cell IS NULL
SET x.subject_cell = s.id + '|' + toString(x.published_day) + '|' + toString(x.ingested_day)
"""

BACKFILL_OBJECT_CELL = """
MATCH (x:Interaction)-[:OBJECT]->(o:Entity) WHERE x.object_cell IS NULL
SET x.object_cell = o.id + '|' + toString(x.published_day) + '|' + toString(x.ingested_day)
"""

# Every cell of the graph at once (a backfill, and the QA bench's load: bench/qa_graph.py). Needs the FactDay id
# index: each MERGE would otherwise scan every cell made before it.
COUNT_ALL_FACT_DAYS = """
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WHERE x.published_day IS NOT NULL AND x.ingested_day IS NOT NULL
WITH e, x.published_day AS day, x.ingested_day AS ingested_day, count(DISTINCT x) AS n
MERGE (d:FactDay {id: e.id + '|' + toString(day) + '|' + toString(ingested_day)})
  ON CREATE SET d.entity_id = e.id, d.day = day, d.ingested_day = ingested_day, d.facts = n
  ON MATCH SET d.facts = n
"""

# The mark RECOUNT_FACT_DAYS leaves, on every fact COUNT_ALL_FACT_DAYS counted.
MARK_ALL_FACTS_COUNTED = """
MATCH (x:Interaction) WHERE x.subject_cell IS NOT NULL
SET x.counted = toString(x.published_day) + '|' + toString(x.ingested_day) + '|' +
    toString(size([cell IN [x.subject_cell, x.object_cell] WHERE cell IS NOT NULL]))
"""


# Each entity's facts of all time, `Entity.facts`: the sum of its cells, recounted after them for the entities of a
# batch (its facts' and its own, which may come after its facts), a cell per (publication, ingestion) day of theirs.
# Not an as-of count: the explorer's search (graph/store/explore.search) ranks the entities a text matches by their
# facts as of D, and counts them in the order of this bound only until no match left unread can rank.
RECOUNT_ENTITY_FACTS = """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
OPTIONAL MATCH (d:FactDay {entity_id: wanted})
WITH e, toInteger(sum(d.facts)) AS n
SET e.facts = n
"""
# The same for every entity at once (a backfill, the QA bench's load): the cells summed per entity, then 0 for those
# with none. O(cells + entities), with no lookup of cells per entity (their index may not be made yet).
COUNT_ALL_ENTITY_FACTS = (
    """
MATCH (d:FactDay)
WITH d.entity_id AS id, toInteger(sum(d.facts)) AS n
MATCH (e:Entity {id: id})
SET e.facts = n
""",
    "MATCH (e:Entity) WHERE e.facts IS NULL SET e.facts = 0",
)


def recount_statements(interaction_ids: list[str], entity_ids: list[str]) -> list[Statement]:
    """The writes that bring the cells of these interactions up to date (after writes.INTERACTIONS), then the
    totals of these entities (those of the interactions, and those written)."""
    statements: list[Statement] = []
    if interaction_ids:
        statements.append((RECOUNT_FACT_DAYS, {"ids": sorted(set(interaction_ids))}))
    if entity_ids:
        statements.append((RECOUNT_ENTITY_FACTS, {"ids": sorted(set(entity_ids))}))
    return statements
