"""A graph store and its mirror opened on one isolation, as the extract stage opens them; the mirror engines the
contract tests run over."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

from newskg.graph.mirror.base import VectorMirror
from newskg.graph.mirror.embed import Embedder
from newskg.graph.store.store import GraphStore
from newskg.wiring import new_mirror, open_graph
from tests.support.isolation import Isolated

# The embedded engines (NEWSKG_MIRROR_ENGINE): Qdrant Edge, the default, and qdrant-client local mode, which runs
# the same adapter as a Qdrant server in production (no Qdrant server binary exists on these machines).
MIRROR_ENGINES = ("edge", "qdrant-local")


@dataclass(frozen=True)
class GraphWorld:
    isolated: Isolated
    store: GraphStore
    mirror: VectorMirror


@contextlib.contextmanager
def open_graph_world(isolated: Isolated, embedder: Embedder) -> Iterator[GraphWorld]:
    """The store initialised and the mirror's collections ensured; both closed on exit (the isolation drops the
    graph and removes the mirror's folder afterwards)."""
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    mirror = new_mirror(isolated.settings, embedder)
    try:
        mirror.ensure()
        yield GraphWorld(isolated, store, mirror)
    finally:
        mirror.close()
        store.conn.close()
