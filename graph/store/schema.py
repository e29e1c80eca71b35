"""Indexes and uniqueness per dialect: the only Cypher that differs between Neo4j 5 and FalkorDB."""

from __future__ import annotations

import logging

from graph.connection import FalkorConnection, GraphConnection

log = logging.getLogger(__name__)

KEYED_LABELS = ("Source", "Article", "Chunk", "Entity", "Interaction", "EntityDay")
RANGE_INDEXES = (
    ("Interaction", "event_day"),
    ("Interaction", "published_day"),
    ("Interaction", "ingested_ms"),
    ("Entity", "name"),
    ("Chunk", "day"),
    ("Article", "published_day"),
    ("EntityDay", "entity_id"),
    ("EntityDay", "day"),
)


def neo4j_ddl() -> list[str]:
    ddl = [
        f"CREATE CONSTRAINT {label.lower()}_id IF NOT EXISTS FOR (n:{label}) REQUIRE n.id IS UNIQUE"
        for label in KEYED_LABELS
    ]
    ddl += [
        f"CREATE INDEX {label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})"
        for label, prop in RANGE_INDEXES
    ]
    return ddl


def falkordb_ddl() -> list[str]:
    # FalkorDB has no IF NOT EXISTS: an existing index answers with an error, which init treats as done.
    return [
        f"CREATE INDEX FOR (n:{label}) ON (n.{prop})"
        for label, prop in [(label, "id") for label in KEYED_LABELS] + list(RANGE_INDEXES)
    ]


def init_schema(conn: GraphConnection) -> list[str]:
    """Create what is missing; idempotent. Returns the statements that created something."""
    created: list[str] = []
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
        _falkordb_unique(conn)
    return created


def _falkordb_unique(conn: FalkorConnection) -> None:
    for label in KEYED_LABELS:
        try:
            conn.execute_command(
                "GRAPH.CONSTRAINT", "CREATE", conn.graph_name, "UNIQUE", "NODE", label, "PROPERTIES", "1", "id"
            )
        except Exception as exc:
            if "already exists" not in str(exc).lower():
                log.warning("FalkorDB unique constraint on %s.id: %s", label, exc)
