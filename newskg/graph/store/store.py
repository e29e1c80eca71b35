"""The graph store: one connection, three users, each its own class over it — the extract stage's writes
(graph/store/writer.py: GraphWriter), the M2 scheduler's ledger (graph/store/ledger.py: M2Ledger) and the as-of
reads (graph/store/reader.py: AsOfReader). Reads outside the store's methods are functions of graph/store over
a store or its connection (explore.py, mentions.py, journals.py, questions.py, export.py, times.py).

GraphStore is the three at once: what the stages, the services and the tests hold, so a call site keeps one
object and one connection (a caller that needs one role can be typed by it)."""

from __future__ import annotations

from newskg.graph.connection import GraphConnection
from newskg.graph.store.ledger import M2Ledger
from newskg.graph.store.reader import AsOfReader
from newskg.graph.store.writer import GraphWriter


class GraphStore(GraphWriter, M2Ledger, AsOfReader):
    def __init__(self, conn: GraphConnection):
        AsOfReader.__init__(self, conn)  # the connection, and the reader's own memory (the writer and ledger hold none)
