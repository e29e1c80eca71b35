"""Export the graph as JSON lines: nodes by label, then relationships by type, paged.

Without an as-of the export is the whole graph (a backup). With one it is the graph as it stood at the end of
that day (graph/store/asof.py): articles, chunks and interactions visible then, the sources and entities they
name, the aliases first seen by then (an entity's aliases are Alias nodes, so an entity's properties hold none),
the M2 batches whose chunks had all arrived, the daily mention and fact counts of days known then, and only the
relationships between visible nodes."""

from __future__ import annotations

from collections.abc import Callable

from newskg.graph.connection.base import Row
from newskg.graph.store.asof import AsOf
from newskg.graph.store.reader import COUNTS_LABELS
from newskg.graph.store.reads import export_node_query, export_rel_query
from newskg.graph.store.schema import without_wall_clock
from newskg.graph.store.store import GraphStore

# One JSON line: a node (type, label, id, properties) or a relationship (type, rel, start, end, properties).
ExportLine = dict[str, object]

# Not ABOUT: an index the writes derive from EVIDENCE and MENTIONS (writes.INTERACTIONS), not what the graph says.
# A graph rebuilt from an export derives it again with schema.ABOUT_BACKFILL (which `graph init` runs only where
# the ABOUT index is missing: run it after loading, or load before init).
RELATIONSHIPS = ("FROM", "IN", "MENTIONS", "ALIAS", "SUBJECT_OF", "OBJECT", "EVIDENCE", "COVERS")
NODE_LABELS = (*COUNTS_LABELS, "Alias", "M2Batch", "EntityDay", "FactDay")
PAGE = 1000


# Node properties that sum the whole graph, whatever the day: an export as of D leaves them out.
ALL_TIME = {"Entity": ("facts",)}  # its facts of all time (graph/store/factdays.RECOUNT_ENTITY_FACTS)


def export_jsonl(store: GraphStore, write: Callable[[ExportLine], object], as_of: AsOf | int | None = None) -> int:
    """Write every node, then every relationship; `as_of` None: the whole graph, else the graph as of that day."""
    bounds: dict[str, int] = AsOf.of(as_of).params() if as_of is not None else {}
    dated = as_of is not None
    lines = 0
    for label in NODE_LABELS:
        after = ""
        while True:
            rows = store.conn.read(export_node_query(label, dated), {"after": after, "limit": PAGE, **bounds})
            for row in rows:
                properties = without_wall_clock(label, row["p"])  # a stamp of the write, not of what the graph says
                if dated:  # a total of all time counts what came after D
                    properties = {k: v for k, v in properties.items() if k not in ALL_TIME.get(label, ())}
                write({"type": "node", "label": label, "id": row["id"], "properties": properties})
            lines += len(rows)
            if len(rows) < PAGE:
                break
            after = _last_id(rows)
    for rel in RELATIONSHIPS:
        skip = 0
        while True:
            rows = store.conn.read(export_rel_query(rel, dated), {"skip": skip, "limit": PAGE, **bounds})
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


def _last_id(rows: list[Row]) -> str:
    """The page's last node id, where the next page starts."""
    last = rows[-1]["id"]
    if not isinstance(last, str):
        raise TypeError(f"a node id is a string, not {last!r}")
    return last
