"""Compare the graph and the mirror, ids and payload times, and repair either side.

The graph is the source of truth: what it has and the mirror lacks, and every point whose time payload differs
from the graph node's, is upserted from the graph (graph/mirror/sync.py). What only the mirror has (a graph write
lost after the mirror write, or a graph rebuilt from an older backup) is written back into the graph from the
payload when what it hangs on (entities, chunks) is there, and deleted otherwise.

Safe beside a running stage: the mirror is scanned before the graph, and a stage writes the graph before the
mirror, so a point the stage writes during the scan is either not seen in the mirror or seen in the graph too;
and a delete removes a point only if it was last written before the scan began (`mirrored_ms`, checked by the
engine with the delete). The same for both mirror adapters (graph/mirror/base.py): an Edge shard lost or left
unloadable by a crash is rebuilt from the graph here."""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass

from pydantic import ValidationError

from newskg.core.records import Interaction
from newskg.graph.connection.base import Row
from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, TIME_FIELDS, Payload, VectorMirror
from newskg.graph.mirror.sync import mirror_from_graph
from newskg.graph.store.store import GraphStore
from newskg.graph.store.times import graph_times


@dataclass
class ReconcileReport:
    collection: str
    graph: int
    mirror_before: int
    added_to_mirror: int
    times_repaired: int  # points whose time payload differed from the graph's
    restored_to_graph: int
    deleted_from_mirror: int
    kept_written_after_scan: int  # absent from the graph but (re)written after the scan began: left alone
    mirror_after: int

    def as_dict(self) -> dict[str, str | int]:
        return asdict(self)


def reconcile(store: GraphStore, mirror: VectorMirror, started_ms: int | None = None) -> list[ReconcileReport]:
    started_ms = started_ms or _next_millisecond()
    mirror.ensure()
    with mirror.bulk():  # a rebuilt Edge shard is indexed once, at the end, and left indexed
        return [_interactions(store, mirror, started_ms), _chunks(store, mirror, started_ms)]


def _next_millisecond() -> int:
    """The first whole millisecond after now: a point stamped with it or later was written after the scan began, and
    one stamped earlier before (taking now itself would keep a point written earlier in the same millisecond)."""
    now_ms = time.time_ns() // 1_000_000
    while (tick := time.time_ns() // 1_000_000) <= now_ms:
        time.sleep(0.0002)
    return tick


@dataclass(frozen=True)
class _Scan:
    in_graph: dict[str, Row]  # graph id → the node's time fields
    in_mirror: dict[str, Payload]  # graph id → the point's time payload
    missing: list[str]  # in the graph only
    stale: list[str]  # in both, the mirror's times differ
    orphans: list[str]  # in the mirror only


def _scan(store: GraphStore, mirror: VectorMirror, collection: str, label: str) -> _Scan:
    in_mirror = mirror.time_payloads(collection)  # first: see the module docstring
    in_graph = graph_times(store, label)
    missing = sorted(in_graph.keys() - in_mirror.keys())
    stale = sorted(
        i for i in in_graph.keys() & in_mirror.keys() if _differs(in_graph[i], in_mirror[i], TIME_FIELDS[collection])
    )
    orphans = sorted(in_mirror.keys() - in_graph.keys())
    return _Scan(in_graph, in_mirror, missing, stale, orphans)


def _differs(graph: Row, payload: Payload, fields: tuple[str, ...]) -> bool:
    return any(graph.get(f) != payload.get(f) for f in fields)


def _delete_old(
    mirror: VectorMirror, collection: str, ids: list[str], in_mirror: dict[str, Payload], started_ms: int
) -> tuple[int, int]:
    recent = [i for i in ids if (in_mirror[i].get("mirrored_ms") or 0) >= started_ms]
    mirror.delete_if_older(collection, ids, started_ms)
    return len(ids) - len(recent), len(recent)


def _interactions(store: GraphStore, mirror: VectorMirror, started_ms: int) -> ReconcileReport:
    scan = _scan(store, mirror, INTERACTIONS, "Interaction")
    in_graph, in_mirror, missing, stale, orphans = scan.in_graph, scan.in_mirror, scan.missing, scan.stale, scan.orphans
    added, _ = mirror_from_graph(store, mirror, interaction_ids=missing)
    mirror_from_graph(store, mirror, interaction_ids=stale)
    restorable = [i for i in map(_interaction_from_payload, mirror.payloads(INTERACTIONS, orphans)) if i]
    store.write_batch(interactions=restorable)  # writes only those whose subject entity exists
    still_missing = sorted(set(orphans) - store.ids("Interaction"))
    deleted, kept = _delete_old(mirror, INTERACTIONS, still_missing, in_mirror, started_ms)
    return ReconcileReport(
        INTERACTIONS,
        graph=len(in_graph),
        mirror_before=len(in_mirror),
        added_to_mirror=added,
        times_repaired=len(stale),
        restored_to_graph=len(orphans) - len(still_missing),
        deleted_from_mirror=deleted,
        kept_written_after_scan=kept,
        mirror_after=mirror.count(INTERACTIONS),
    )


def _interaction_from_payload(payload: Payload) -> Interaction | None:
    fields = {k: payload[k] for k in Interaction.model_fields if k in payload and k != "schema_version"}
    try:
        return Interaction(id=payload["graph_id"], **fields)
    except (ValidationError, KeyError):
        return None  # too little left to rebuild it: deleted from the mirror


def _chunks(store: GraphStore, mirror: VectorMirror, started_ms: int) -> ReconcileReport:
    scan = _scan(store, mirror, CHUNKS, "Chunk")
    in_graph, in_mirror, missing, stale, orphans = scan.in_graph, scan.in_mirror, scan.missing, scan.stale, scan.orphans
    _, added = mirror_from_graph(store, mirror, chunk_ids=missing)
    mirror_from_graph(store, mirror, chunk_ids=stale)
    # A chunk is only whole with its article and mentions: the stream rebuilds it.
    deleted, kept = _delete_old(mirror, CHUNKS, orphans, in_mirror, started_ms)
    return ReconcileReport(
        CHUNKS,
        graph=len(in_graph),
        mirror_before=len(in_mirror),
        added_to_mirror=added,
        times_repaired=len(stale),
        restored_to_graph=0,
        deleted_from_mirror=deleted,
        kept_written_after_scan=kept,
        mirror_after=mirror.count(CHUNKS),
    )
