"""Export the graph as JSON lines: nodes by label, then relationships by type, paged.

Without an as-of the export is the whole graph (a backup). With one it is the graph as it stood at the end of
that day (graph/store/asof.py): articles, chunks and interactions visible then, the sources and entities they
name, the M2 batches whose chunks had all arrived, the daily mention counts of days known
then, and only the relationships between visible nodes."""

from __future__ import annotations

from collections.abc import Callable

from graph.store.asof import AsOf
from graph.store.reads import ENTITY_VISIBLE, visible
from graph.store.store import COUNTS_LABELS, GraphStore

RELATIONSHIPS = ("FROM", "IN", "MENTIONS", "SUBJECT_OF", "OBJECT", "EVIDENCE", "COVERS")
PAGE = 1000

# Label → how a node of it is visible. The timed nodes carry their own days; a source exists once a visible
# article is from it, an entity once a visible chunk or interaction names it (reads.ENTITY_VISIBLE), an M2 batch
# once the last of its chunks is visible (it cannot have run before).
_BATCH_RAN = (
    "WITH n, max(c.day) AS last_day, max(c.ingested_ms) AS last_ms "
    "WHERE last_day <= $as_of_day AND last_ms <= $as_of_ms"
)
_NODE_AS_OF = {
    "Source": f"MATCH (n:Source)<-[:FROM]-(a:Article) WHERE n.id > $after AND {visible('a')}",
    "Article": f"MATCH (n:Article) WHERE n.id > $after AND {visible('n')}",
    "Chunk": f"MATCH (n:Chunk) WHERE n.id > $after AND {visible('n', 'day')}",
    "Entity": "MATCH (e:Entity) WHERE e.id > $after " + ENTITY_VISIBLE + " WITH e AS n",
    "Interaction": f"MATCH (n:Interaction) WHERE n.id > $after AND {visible('n')}",
    "M2Batch": f"MATCH (n:M2Batch)-[:COVERS]->(c:Chunk) WHERE n.id > $after {_BATCH_RAN}",
    # A daily mention count is a cell per (publication day, ingestion day): visible when both are on or before D
    # (an export as of D is the strict, ingested view).
    "EntityDay": "MATCH (n:EntityDay) WHERE n.id > $after AND n.day <= $as_of_day AND n.ingested_day <= $as_of_day "
    "AND n.chunks > 0",
}

# Relationship → the MATCH that makes (a)-[r]->(b) visible. Where an end's visibility follows from the other's
# (a visible article's source, a visible chunk's mentioned entities, the entities of a visible interaction, the
# chunks of a visible M2 batch) only the timed end is tested.
_REL_AS_OF = {
    "FROM": f"MATCH (a)-[r:FROM]->(b) WHERE {visible('a')}",
    "IN": f"MATCH (a)-[r:IN]->(b) WHERE {visible('a', 'day')} AND {visible('b')}",
    "MENTIONS": f"MATCH (a)-[r:MENTIONS]->(b) WHERE {visible('a', 'day')}",
    "SUBJECT_OF": f"MATCH (a)-[r:SUBJECT_OF]->(b) WHERE {visible('b')}",
    "OBJECT": f"MATCH (a)-[r:OBJECT]->(b) WHERE {visible('a')}",
    "EVIDENCE": f"MATCH (a)-[r:EVIDENCE]->(b) WHERE {visible('a')} AND {visible('b', 'day')}",
    "COVERS": f"MATCH (n:M2Batch)-[:COVERS]->(c:Chunk) {_BATCH_RAN} MATCH (n)-[r:COVERS]->(b) WITH n AS a, r, b",
}


def _node_query(label: str, as_of: AsOf | None) -> str:
    # Labels and types come from the fixed tables of this module, never from input.
    match = _NODE_AS_OF[label] if as_of else f"MATCH (n:{label}) WHERE n.id > $after"
    return match + " WITH DISTINCT n RETURN n.id AS id, properties(n) AS p ORDER BY id LIMIT $limit"


def _rel_query(rel: str, as_of: AsOf | None) -> str:
    match = _REL_AS_OF[rel] if as_of else f"MATCH (a)-[r:{rel}]->(b)"
    return match + (
        " RETURN a.id AS start, b.id AS end, properties(r) AS p ORDER BY start, end SKIP $skip LIMIT $limit"
    )


def export_jsonl(store: GraphStore, write: Callable[[dict], object], as_of: AsOf | int | None = None) -> int:
    """Write every node, then every relationship; `as_of` None: the whole graph, else the graph as of that day."""
    as_of = AsOf.of(as_of) if as_of is not None else None
    bounds = as_of.params() if as_of else {}
    lines = 0
    for label in (*COUNTS_LABELS, "M2Batch", "EntityDay"):
        after = ""
        while True:
            rows = store.conn.read(_node_query(label, as_of), {"after": after, "limit": PAGE, **bounds})
            for row in rows:
                write({"type": "node", "label": label, "id": row["id"], "properties": row["p"]})
            lines += len(rows)
            if len(rows) < PAGE:
                break
            after = rows[-1]["id"]
    for rel in RELATIONSHIPS:
        skip = 0
        while True:
            rows = store.conn.read(_rel_query(rel, as_of), {"skip": skip, "limit": PAGE, **bounds})
            for row in rows:
                write(
                    {
                        "type": "relationship",
                        "rel": rel,
                        "start": row["start"],
                        "end": row["end"],
                        "properties": row["p"],
                    }
                )
            lines += len(rows)
            if len(rows) < PAGE:
                break
            skip += PAGE
    return lines
