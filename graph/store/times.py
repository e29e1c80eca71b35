"""The time axes of every interaction and chunk node, paged by id: what reconcile compares with the mirror's
payloads (a separate module from reads.py, whose queries serve the as-of read paths)."""

from __future__ import annotations

from typing import Any

from graph.store.store import GraphStore

INTERACTION_TIMES_PAGE = """
MATCH (n:Interaction) WHERE n.id > $after
RETURN n.id AS id, n.event_day AS event_day, n.published_day AS published_day, n.ingested_ms AS ingested_ms,
       n.ingested_at AS ingested_at
ORDER BY id LIMIT $limit
"""

# A chunk node a sighting made before its kept chunk arrived has no text yet: it is not a chunk until then.
CHUNK_TIMES_PAGE = """
MATCH (n:Chunk) WHERE n.id > $after AND n.text IS NOT NULL
RETURN n.id AS id, n.day AS day, n.ingested_ms AS ingested_ms, n.ingested_at AS ingested_at
ORDER BY id LIMIT $limit
"""

QUERIES = {"Interaction": INTERACTION_TIMES_PAGE, "Chunk": CHUNK_TIMES_PAGE}


def graph_times(store: GraphStore, label: str, page: int = 10_000) -> dict[str, dict[str, Any]]:
    """id → its time fields, for every node of `label` (Interaction or Chunk)."""
    query = QUERIES[label]
    found: dict[str, dict[str, Any]] = {}
    after = ""
    while True:
        rows = store.conn.read(query, {"after": after, "limit": page})
        found.update((r["id"], r) for r in rows)
        if len(rows) < page:
            return found
        after = rows[-1]["id"]
