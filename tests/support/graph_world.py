"""A graph store and its Qdrant mirror opened on one isolation, as the extract stage opens them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from graph.mirror.embed import Embedder
from graph.mirror.qdrant import VectorMirror
from graph.store.store import GraphStore
from newskg.wiring import open_graph, open_qdrant
from tests.support.isolation import Isolated


@dataclass(frozen=True)
class GraphWorld:
    isolated: Isolated
    store: GraphStore
    mirror: VectorMirror


@contextlib.contextmanager
def open_graph_world(isolated: Isolated, embedder: Embedder) -> Iterator[GraphWorld]:
    """The store initialised and the mirror's collections ensured; both closed on exit (the isolation drops the
    graph and removes the Qdrant folder afterwards)."""
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    mirror = VectorMirror(open_qdrant(isolated.settings), embedder)
    try:
        mirror.ensure()
        yield GraphWorld(isolated, store, mirror)
    finally:
        mirror.close()
        store.conn.close()
