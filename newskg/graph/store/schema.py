"""Indexes and uniqueness per dialect: the only Cypher that differs between Neo4j 5 and FalkorDB.

Neo4j 5 (`neo4j_ddl`): a uniqueness constraint per MERGE key (it brings its own range index, and keeps two
writers from creating the same node twice), explicit range indexes on the properties reads filter on, and
full-text indexes for analysts in Neo4j Browser (`CALL db.index.fulltext.queryNodes("entity_names", "doja~")`;
no newskg read uses them, so FalkorDB gets none). Every statement is `IF NOT EXISTS`: running it again changes
nothing. FalkorDB (`falkordb_ddl`, `falkordb_constraint_commands`): the same range indexes in the syntax both
engines share, and its unique constraints as `GRAPH.CONSTRAINT` commands (it has no Cypher for them)."""

from __future__ import annotations

import logging
from typing import cast

from newskg.graph.connection import FalkorConnection, GraphConnection
from newskg.graph.connection.base import Dialect
from newskg.graph.store import factbounds, factdays

log = logging.getLogger(__name__)

# Every label the store MERGEs on `id`, and the other MERGE keys: each is unique in the graph.
KEYED_LABELS = (
    "Source",
    "Article",
    "Chunk",
    "Entity",
    "Alias",
    "Interaction",
    "EntityDay",
    "FactDay",
    "M2Batch",
    "M2Failed",
    "Linking",
)
MERGE_KEYS = (*((label, "id") for label in KEYED_LABELS), ("M2Pair", "pair"))
RANGE_INDEXES = (
    ("Interaction", "event_day"),
    ("Interaction", "published_day"),
    ("Interaction", "ingested_ms"),
    ("Interaction", "subject_day"),  # "<entity id>|<event day>": an entity's facts of a day (writes.INTERACTIONS)
    ("Interaction", "object_day"),
    ("Entity", "name"),
    ("Entity", "lower"),  # toLower(name): reads.ENTITY_FIND (writes.ENTITIES sets it with the name)
    ("Alias", "lower"),
    ("Chunk", "day"),
    ("Article", "published_day"),
    ("EntityDay", "entity_id"),
    ("EntityDay", "day"),
    # "<entity id>|<published day>|<ingested day>": the facts of a daily fact count's cell (graph/store/factdays.py)
    ("Interaction", "subject_cell"),
    ("Interaction", "object_cell"),
    ("FactDay", "entity_id"),  # made after the cells are backfilled: init backfills while it is missing
    ("Linking", "order"),
    ("Linking", "chunk_id"),  # a chunk written whole, by any record (extract/stage.py)
    ("Entity", "names_ms"),  # when the entity's names last changed: a resolver refresh's read (writes.ENTITIES)
)
# Relationship type → property, as RANGE_INDEXES: the same syntax `FOR ()-[r:TYPE]-()` on both engines.
REL_RANGE_INDEXES = (
    ("ABOUT", "key"),  # "<entity id>|<event day>": the facts a chunk states about an entity (writes.INTERACTIONS)
)
# Node properties set from the wall clock, not from the data: they differ between two runs over the same input, so
# nothing exported or compared holds them (graph/store/export.py, tests/support/graph_dump.py).
WALL_CLOCK = {
    "Linking": ("order",),  # the order journals are replayed in (extract/stage.py `_next_order`)
    "M2Failed": ("at",),  # when the M2 batch was given up (its dead letter's time)
    "Entity": ("names_ms",),  # when its names last changed (writes.ENTITIES), by the graph server's clock
}


def without_wall_clock(labels: object, properties: object) -> dict[str, object]:
    """A node's properties (a map read from the graph) without those set from the wall clock (WALL_CLOCK);
    `labels`: its label or labels."""
    if not isinstance(properties, dict):
        raise TypeError(f"node properties are a map, not {properties!r}")
    named = [labels] if isinstance(labels, str) else cast(list[object], labels) if isinstance(labels, list) else []
    names = {name for label in named for name in WALL_CLOCK.get(str(label), ())}
    return {str(key): value for key, value in cast(dict[object, object], properties).items() if key not in names}


# Neo4j only: name → (label, properties).
FULLTEXT_INDEXES = {
    "entity_names": ("Entity", ("name", "description")),
    "chunk_text": ("Chunk", ("title", "text")),
}


def neo4j_ddl() -> list[str]:
    ddl = [
        f"CREATE CONSTRAINT {label.lower()}_{key} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{key} IS UNIQUE"
        for label, key in MERGE_KEYS
    ]
    ddl += [
        f"CREATE RANGE INDEX {label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"
        for label, prop in RANGE_INDEXES
    ]
    ddl += [
        f"CREATE RANGE INDEX {rel.lower()}_{prop} IF NOT EXISTS FOR ()-[r:{rel}]-() ON (r.{prop})"
        for rel, prop in REL_RANGE_INDEXES
    ]
    ddl += [
        f"CREATE FULLTEXT INDEX {name} IF NOT EXISTS FOR (n:{label}) ON EACH [{', '.join(f'n.{p}' for p in props)}]"
        for name, (label, props) in FULLTEXT_INDEXES.items()
    ]
    return ddl


def falkordb_ddl() -> list[str]:
    # FalkorDB has no IF NOT EXISTS: an existing index answers with an error, which init treats as done.
    nodes = [f"CREATE INDEX FOR (n:{label}) ON (n.{prop})" for label, prop in MERGE_KEYS + RANGE_INDEXES]
    return nodes + [f"CREATE INDEX FOR ()-[r:{rel}]-() ON (r.{prop})" for rel, prop in REL_RANGE_INDEXES]


def falkordb_constraint_commands(graph: str) -> list[tuple[str, ...]]:
    """FalkorDB's unique constraints (server commands, not Cypher); each needs the index falkordb_ddl makes."""
    return [
        ("GRAPH.CONSTRAINT", "CREATE", graph, "UNIQUE", "NODE", label, "PROPERTIES", "1", key)
        for label, key in MERGE_KEYS
    ]


def ddl_script(dialect: Dialect, graph: str = "newskg") -> str:
    """The schema as a script to read or pipe: Neo4j's statements for `cypher-shell`; FalkorDB's index statements,
    with its constraint commands as comments (they go through redis-cli, not Cypher)."""
    # what an older graph lacks comes first, as init fills it before it makes its index (the keys, edges, names and
    # stamps, the facts' salience bounds: a no-op after; the fact counts and totals are counted again, the same numbers)
    backfilled = (
        *DAY_KEYS_BACKFILL,
        *ABOUT_BACKFILL,
        *ENTITY_LOWER_BACKFILL,
        *NAMES_STAMP_BACKFILL,
        *fact_days_backfill(dialect),
        *factdays.COUNT_ALL_ENTITY_FACTS,
        factbounds.BOUND_ALL_FACTS,
    )
    backfill = "".join(f"{one_line(statement)};\n" for statement in backfilled)
    if dialect == "neo4j":
        return backfill + "".join(f"{statement};\n" for statement in neo4j_ddl())
    commands = [f"// redis-cli {' '.join(command)}\n" for command in falkordb_constraint_commands(graph)]
    return backfill + "".join(f"{statement};\n" for statement in falkordb_ddl()) + "".join(commands)


def one_line(statement: str) -> str:
    """A statement of the script on one line (a statement per line; none of these has a string with a line break
    or a run of spaces in it)."""
    return " ".join(statement.split())


# A graph written before the (entity, day) keys of interactions existed gets them from its edges, as the write sets
# them (writes.INTERACTIONS), before their index is made: a crash in between leaves the index missing, so the next
# init fills them again (only the nodes still lacking them).
DAY_KEYS_INDEX = ("Interaction", "subject_day")
DAY_KEYS_BACKFILL = (
    "MATCH (s:Entity)-[:SUBJECT_OF]->(x:Interaction) WHERE x.subject_day IS NULL "
    "SET x.subject_day = s.id + '|' + toString(x.event_day)",
    "MATCH (x:Interaction)-[:OBJECT]->(o:Entity) WHERE x.object_day IS NULL "
    "SET x.object_day = o.id + '|' + toString(x.event_day)",
)
# The same for the ABOUT edges (writes.INTERACTIONS), after the day keys they leave out: a fact is ABOUT every
# entity an evidence chunk of it mentions, other than those its keys name. One statement for the whole graph;
# DISTINCT: a fact with two evidence chunks that mention one entity gets one edge. Each edge is MERGEd, so a
# second run after a crash makes none twice.
ABOUT_INDEX = ("ABOUT", "key")
ABOUT_BACKFILL = (
    "MATCH (x:Interaction)-[:EVIDENCE]->(:Chunk)-[:MENTIONS]->(m:Entity) "
    "WITH DISTINCT x, m, m.id + '|' + toString(x.event_day) AS key "
    "WHERE key <> coalesce(x.subject_day, '') AND key <> coalesce(x.object_day, '') "
    "MERGE (x)-[:ABOUT {key: key}]->(m)",
)
# A graph written before entities had their lower-case name (writes.ENTITIES) gets it, likewise before its index.
ENTITY_LOWER_INDEX = ("Entity", "lower")
ENTITY_LOWER_BACKFILL = ("MATCH (e:Entity) WHERE e.lower IS NULL SET e.lower = toLower(e.name)",)
# The same for the entities' name stamps (writes.ENTITIES): an entity written before them gets 0, older than any
# refresh's cursor (a resolver's first read takes every entity, stamped or not), so every entity carries one.
NAMES_STAMP_INDEX = ("Entity", "names_ms")
NAMES_STAMP_BACKFILL = ("MATCH (e:Entity) WHERE e.names_ms IS NULL SET e.names_ms = 0",)
# An entity written before its fact total was kept (factdays.RECOUNT_ENTITY_FACTS) has none: init sums its cells
# (after them) while any entity lacks one. No index says so: one label scan per init, ~30 ms at 100k entities.
ENTITY_WITHOUT_FACTS = "MATCH (e:Entity) WHERE e.facts IS NULL RETURN e.id AS id LIMIT 1"
FALKORDB_INDEXES = "CALL db.indexes() YIELD label, properties RETURN label, properties"
NEO4J_INDEXES = "SHOW INDEXES YIELD labelsOrTypes, properties RETURN labelsOrTypes AS label, properties"


# A graph written before the daily fact counts (graph/store/factdays.py) gets the interactions' ingestion days and
# cell keys, then every cell, before the FactDay entity index is made (the last of them, by the DDL after): a crash
# in between leaves that index missing, so the next init runs them again (each is idempotent). The FactDay id index
# comes first, as the counting MERGE needs it (FalkorDB answers "already indexed" to it in the DDL after).
FACT_DAYS_INDEX = ("FactDay", "entity_id")


def fact_days_backfill(dialect: Dialect) -> list[str]:
    fact_day_id = (
        "CREATE CONSTRAINT factday_id IF NOT EXISTS FOR (n:FactDay) REQUIRE n.id IS UNIQUE"
        if dialect == "neo4j"
        else "CREATE INDEX FOR (n:FactDay) ON (n.id)"
    )
    return [
        factdays.BACKFILL_INGESTED_DAY,
        factdays.BACKFILL_SUBJECT_CELL,
        factdays.BACKFILL_OBJECT_CELL,
        fact_day_id,
        factdays.COUNT_ALL_FACT_DAYS,
        factdays.MARK_ALL_FACTS_COUNTED,
    ]


def _backfill_fact_days(conn: GraphConnection) -> None:
    for statement in fact_days_backfill(conn.dialect):
        try:
            conn.run(statement)
        except Exception as exc:  # the FactDay id index of an earlier, interrupted backfill
            if "already indexed" not in str(exc).lower():
                raise


def _backfill(conn: GraphConnection) -> None:
    """What an older graph lacks of what the writes derive, each while the index made after it is missing."""
    # in this order: the ABOUT edges leave out the entities the day keys name
    derived = (
        (DAY_KEYS_INDEX, DAY_KEYS_BACKFILL),
        (ABOUT_INDEX, ABOUT_BACKFILL),
        (ENTITY_LOWER_INDEX, ENTITY_LOWER_BACKFILL),
        (NAMES_STAMP_INDEX, NAMES_STAMP_BACKFILL),
    )
    for index, backfill in derived:
        if not _has_index(conn, *index):
            for statement in backfill:
                conn.run(statement)
    if not _has_index(conn, *FACT_DAYS_INDEX):
        _backfill_fact_days(conn)
    if conn.read(ENTITY_WITHOUT_FACTS):
        for statement in factdays.COUNT_ALL_ENTITY_FACTS:
            conn.run(statement)
    if conn.read(factbounds.FACT_WITHOUT_BOUNDS):
        conn.run(factbounds.BOUND_ALL_FACTS)


def init_schema(conn: GraphConnection) -> list[str]:
    """Create what is missing; idempotent. Returns the statements that created something."""
    created: list[str] = []
    _backfill(conn)
    if conn.dialect == "neo4j":
        for statement in neo4j_ddl():
            conn.run(statement)
            created.append(statement)
        return created
    for statement in falkordb_ddl():
        try:
            conn.run(statement)
            created.append(statement)
        except Exception as exc:
            if "already indexed" not in str(exc).lower():
                raise
    if isinstance(conn, FalkorConnection):
        created += _falkordb_unique(conn)
        if created:
            _falkordb_schema_into_aof_base(conn)
    return created


def _has_index(conn: GraphConnection, label: str, prop: str) -> bool:
    """Whether an index covers `prop` of `label`, a node label or a relationship type (FalkorDB: one index per
    label or type lists all its properties)."""
    query = NEO4J_INDEXES if conn.dialect == "neo4j" else FALKORDB_INDEXES
    try:
        rows = conn.read(query)
    except Exception as exc:  # FalkorDB: a graph nothing was written to yet is no key at all
        if "empty key" in str(exc).lower():
            return False
        raise
    for row in rows:
        labels, properties = row["label"], row["properties"]
        named = cast("list[object]", labels) if isinstance(labels, list) else [labels]
        if label in named and prop in cast("list[object]", properties or []):
            return True
    return False


# FalkorDB's catalogue of constraints (Neo4j 5 has SHOW CONSTRAINTS instead): the dialect layer's, never sent to Neo4j
FALKORDB_CONSTRAINTS = "CALL db.constraints() YIELD type, label, properties, entitytype RETURN *"


def _falkordb_unique(conn: FalkorConnection) -> list[str]:
    # Only the missing ones: FalkorDB appends even a refused GRAPH.CONSTRAINT CREATE to its AOF, so asking again
    # for an existing constraint made every restart replay (and log as CRITICAL) one failing command per init.
    existing = _falkordb_unique_keys(conn)
    created: list[str] = []
    for command in falkordb_constraint_commands(conn.graph_name):
        label, key = command[5], command[8]
        if (label, key) in existing:
            continue
        try:
            conn.execute_command(*command)
            created.append(" ".join(command))
        except Exception as exc:
            if "already exists" not in str(exc).lower():
                log.warning("FalkorDB unique constraint %s: %s", " ".join(command[5:]), exc)
    return created


def _falkordb_unique_keys(conn: FalkorConnection) -> set[tuple[str, str]]:
    """(label, property) of the graph's single-property unique node constraints, pending or operational."""
    rows = conn.read(FALKORDB_CONSTRAINTS)
    keys: set[tuple[str, str]] = set()
    for row in rows:
        properties = cast("list[object]", row["properties"]) if isinstance(row["properties"], list) else []
        if row["type"] == "UNIQUE" and row["entitytype"] == "NODE" and len(properties) == 1:
            keys.add((str(row["label"]), str(properties[0])))
    return keys


def _falkordb_schema_into_aof_base(conn: FalkorConnection) -> None:
    """Rewrite the AOF once the schema changed, so indexes and constraints live in its RDB base.

    FalkorDB cannot use an index while it replays the AOF that creates it: every MERGE replayed after a
    `CREATE INDEX` in the incremental AOF scans its whole label, so a restart replays the graph's history in
    quadratic time (a 4.6 MB AOF: 17 s of CPU, where the live writes had taken under a second) and `services up`
    gave up waiting. An index loaded from the base is used at once."""
    if not conn.compact_aof():
        log.warning("FalkorDB: the AOF was not rewritten after the schema change (AOF off, refused or too slow)")
