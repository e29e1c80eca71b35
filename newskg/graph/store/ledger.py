"""The M2 scheduler's ledger in the graph: the chunks of a pair no M2 batch has covered yet, the batches given up on,
and the pairs with a remainder waiting. One of the three users of the graph store (graph/store/store.py); its
Cypher is in graph/store/m2.py (writes) and graph/store/reads.py (reads)."""

from __future__ import annotations

from newskg.core.ids import digest
from newskg.core.records import Chunk
from newskg.graph.connection import GraphConnection
from newskg.graph.store import m2, reads
from newskg.graph.store.rows import OpenPair, PendingChunk, chunk_of, rows_of


class M2Ledger:
    """The M2 bookkeeping over one connection."""

    def __init__(self, conn: GraphConnection):
        self.conn = conn

    def m2_pending(self, subject_id: str, object_id: str, pair: str) -> list[tuple[Chunk, str, list[str]]]:
        """(chunk, marked text, linked entity ids) of the chunks mentioning both entities that no M2 batch of this
        pair has covered or given up on yet, oldest first."""
        rows = self.conn.read(reads.M2_PENDING, {"subject": subject_id, "object": object_id, "pair": pair})
        return [
            (chunk_of(r, [r.article_id], r.source, r.source_id), r.marked or r.text, list(r.entity_ids or []))
            for r in rows_of(PendingChunk, rows)
        ]

    def m2_give_up(self, pair: str, chunk_ids: list[str], reason: str, tries: int, at: str) -> None:
        """A batch dead-lettered after its tries: its chunks leave the pair's pending list without counting as
        covered (no M2Batch)."""
        self.conn.run_many(
            [
                (
                    m2.M2_GAVE_UP,
                    {
                        "rows": [
                            {
                                "id": "m2f_" + digest(pair, *chunk_ids),
                                "pair": pair,
                                "chunk_ids": chunk_ids,
                                "reason": reason,
                                "tries": tries,
                                "at": at,
                            }
                        ]
                    },
                )
            ]
        )

    def m2_set_open(self, pairs: list[tuple[str, str]], is_open: bool) -> None:
        """Remember which pairs have a remainder waiting, so a restarted stage sends it too."""
        rows = [{"pair": f"{s}|{o}", "subject_id": s, "object_id": o, "open": is_open} for s, o in pairs]
        if rows:
            self.conn.run_many([(m2.M2_PAIR_STATE, {"rows": rows})])

    def m2_open_pairs(self) -> list[tuple[str, str]]:
        return [(r.subject_id, r.object_id) for r in rows_of(OpenPair, self.conn.read(reads.M2_OPEN_PAIRS))]
