"""What a graph holds, as plain sorted data: every node (labels, properties) and every relationship (type,
properties, the keys of its ends). Two graphs hold the same when their dumps are equal, whatever internal ids
the server gave their elements. Properties set from the wall clock (graph/store/schema.py WALL_CLOCK) are left
out: two runs over the same input differ there and nowhere else."""

from __future__ import annotations

import json

from newskg.graph.connection import GraphConnection
from newskg.graph.store.schema import without_wall_clock

NODES = "MATCH (n) RETURN labels(n) AS labels, properties(n) AS props"
RELATIONSHIPS = (
    "MATCH (a)-[r]->(b) RETURN coalesce(a.id, a.pair) AS start, type(r) AS type, properties(r) AS props, "
    "coalesce(b.id, b.pair) AS end"
)


def graph_dump(conn: GraphConnection) -> list[str]:
    """One JSON line per node and per relationship, sorted (duplicate relationships stay, so they count)."""
    nodes = [
        json.dumps(["node", row["labels"], without_wall_clock(row["labels"], row["props"])], sort_keys=True)
        for row in conn.read(NODES)
    ]
    relationships = [
        json.dumps(["rel", row["start"], row["type"], row["props"], row["end"]], sort_keys=True)
        for row in conn.read(RELATIONSHIPS)
    ]
    return sorted(nodes + relationships)
