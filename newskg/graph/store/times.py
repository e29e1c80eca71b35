"""The time axes of every interaction and chunk node, paged by id: what reconcile compares with the mirror's
payloads (the queries: graph/store/reads.py TIMES_PAGES). Kept as the node's column → value, because reconcile
compares them field by field with the mirror's payload."""

from __future__ import annotations

from newskg.graph.connection.base import Row
from newskg.graph.store.reads import TIMES_PAGES
from newskg.graph.store.store import GraphStore


def graph_times(store: GraphStore, label: str, page: int = 10_000) -> dict[str, Row]:
    """id → its time fields, for every node of `label` (Interaction or Chunk)."""
    query = TIMES_PAGES[label]
    found: dict[str, Row] = {}
    after = ""
    while True:
        rows = store.conn.read(query, {"after": after, "limit": page})
        found.update((str(r["id"]), r) for r in rows)
        if len(rows) < page:
            return found
        after = str(rows[-1]["id"])
