"""The mirror written from the graph: after a graph write, the stage (and reconcile) upsert what the graph now
holds for those ids, so the mirror's payload equals the graph's whatever order the records came in (the graph
keeps the first publication and first ingestion of a chunk or interaction; a payload built from the record in
hand would carry the last write's times).

Cost: one read of the written ids per batch (bench/graph.py `mirror readback`), next to the embedding of the same
texts that the upsert needs anyway."""

from __future__ import annotations

from collections.abc import Iterable

from newskg.graph.mirror.base import VectorMirror
from newskg.graph.store.store import GraphStore

PAGE = 256


def mirror_from_graph(
    store: GraphStore, mirror: VectorMirror, interaction_ids: Iterable[str] = (), chunk_ids: Iterable[str] = ()
) -> tuple[int, int]:
    """Upsert the graph's current view of these interactions and chunks; returns (interactions, chunks) upserted.
    Ids the graph lacks (an interaction whose subject entity is missing) are skipped."""
    interactions = sorted(set(interaction_ids))
    chunks = sorted(set(chunk_ids))
    upserted = [0, 0]
    for start in range(0, max(len(interactions), len(chunks)), PAGE):
        # A page of each read back, then embedded in one call (a stage's batch is one page of each).
        page_interactions, page_chunks = interactions[start : start + PAGE], chunks[start : start + PAGE]
        added = mirror.upsert_both(
            store.interactions(page_interactions) if page_interactions else [],
            store.chunks(page_chunks) if page_chunks else [],
        )
        upserted[0] += added[0]
        upserted[1] += added[1]
    return upserted[0], upserted[1]
