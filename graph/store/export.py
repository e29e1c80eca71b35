"""Export the whole graph as JSON lines: nodes by label, then relationships by type, paged."""

from __future__ import annotations

from collections.abc import Callable

from graph.store.store import COUNTS_LABELS, GraphStore

RELATIONSHIPS = ("FROM", "IN", "MENTIONS", "SUBJECT_OF", "OBJECT", "EVIDENCE", "COVERS")
PAGE = 1000


def export_jsonl(store: GraphStore, write: Callable[[dict], object]) -> int:
    lines = 0
    for label in (*COUNTS_LABELS, "M2Batch", "EntityDay"):
        after = ""
        while True:
            # Labels and types come from the fixed tuples above, never from input.
            rows = store.conn.read(f"MATCH (n:{label}) WHERE n.id > $after RETURN n.id AS id, properties(n) AS p "
                                   "ORDER BY id LIMIT $limit", {"after": after, "limit": PAGE})
            for row in rows:
                write({"type": "node", "label": label, "id": row["id"], "properties": row["p"]})
            lines += len(rows)
            if len(rows) < PAGE:
                break
            after = rows[-1]["id"]
    for rel in RELATIONSHIPS:
        skip = 0
        while True:
            rows = store.conn.read(f"MATCH (a)-[r:{rel}]->(b) RETURN a.id AS start, b.id AS end, "
                                   "properties(r) AS p ORDER BY start, end SKIP $skip LIMIT $limit",
                                   {"skip": skip, "limit": PAGE})
            for row in rows:
                write({"type": "relationship", "rel": rel, "start": row["start"], "end": row["end"],
                       "properties": row["p"]})
            lines += len(rows)
            if len(rows) < PAGE:
                break
            skip += PAGE
    return lines
