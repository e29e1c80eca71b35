"""Compare the ids in the graph and the mirror and repair either side, so the counts end equal.

The graph is the source of truth: what it has and the mirror lacks is embedded and upserted. What only the
mirror has (a graph write lost after the mirror write, or a graph rebuilt from an older backup) is written back
into the graph from the payload when what it hangs on (entities, chunks) is there, and deleted otherwise."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pydantic import ValidationError

from core.records import Interaction
from graph.mirror.qdrant import CHUNKS, INTERACTIONS, VectorMirror
from graph.store.store import GraphStore

BATCH = 256


@dataclass
class ReconcileReport:
    collection: str
    graph: int
    mirror_before: int
    added_to_mirror: int
    restored_to_graph: int
    deleted_from_mirror: int
    mirror_after: int

    def as_dict(self) -> dict:
        return asdict(self)


def reconcile(store: GraphStore, mirror: VectorMirror) -> list[ReconcileReport]:
    mirror.ensure()
    return [_interactions(store, mirror), _chunks(store, mirror)]


def _interactions(store: GraphStore, mirror: VectorMirror) -> ReconcileReport:
    in_graph, in_mirror = store.ids("Interaction"), mirror.graph_ids(INTERACTIONS)
    missing = sorted(in_graph - in_mirror)
    for start in range(0, len(missing), BATCH):
        mirror.upsert_interactions(store.interactions(missing[start:start + BATCH]))
    orphans = sorted(in_mirror - in_graph)
    restorable = [i for i in map(_interaction_from_payload, mirror.payloads(INTERACTIONS, orphans)) if i]
    store.write_batch(interactions=restorable)  # writes only those whose subject entity exists
    still_missing = sorted(set(orphans) - store.ids("Interaction"))
    mirror.delete(INTERACTIONS, still_missing)
    return ReconcileReport(INTERACTIONS, len(in_graph), len(in_mirror), len(missing),
                           len(orphans) - len(still_missing), len(still_missing), mirror.count(INTERACTIONS))


def _interaction_from_payload(payload: dict) -> Interaction | None:
    fields = {k: payload[k] for k in Interaction.model_fields if k in payload and k != "schema_version"}
    try:
        return Interaction(id=payload["graph_id"], **fields)
    except (ValidationError, KeyError):
        return None  # too little left to rebuild it: deleted from the mirror


def _chunks(store: GraphStore, mirror: VectorMirror) -> ReconcileReport:
    in_graph, in_mirror = store.ids("Chunk"), mirror.graph_ids(CHUNKS)
    missing = sorted(in_graph - in_mirror)
    added = 0
    for start in range(0, len(missing), BATCH):
        added += mirror.upsert_chunks(store.chunks(missing[start:start + BATCH]))
    orphans = sorted(in_mirror - in_graph)
    mirror.delete(CHUNKS, orphans)  # a chunk is only whole with its article and mentions: the stream rebuilds it
    return ReconcileReport(CHUNKS, len(in_graph), len(in_mirror), added, 0, len(orphans), mirror.count(CHUNKS))
