"""A process that writes the graph and its mirror as the extract stage does (graph first, then the mirror from what
the graph holds), batch after batch until it is killed, and prints `committed N` once both writes of batch N
returned. tests/integration/test_edge_kill.py kills it with SIGKILL mid-write. Settings come from the NEWSKG_*
environment of the test's isolation; `python -m tests.support.edge_writer FIRST_BATCH`."""

from __future__ import annotations

import hashlib
import itertools
import sys

import numpy as np

from newskg.core.records import Chunk, Interaction
from newskg.core.settings import Settings
from newskg.graph.mirror.sync import mirror_from_graph
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph, open_mirror
from tests.support.records import CHOUPETTE, DOJA, ENTITIES, doja_and_choupette
from tests.support.records import dated_chunk as chunk

PER_BATCH = 100  # chunks per batch, each stating one fact: 200 points of 384 dimensions a batch


class HashEmbedder:
    """MiniLM's dimension without its model: a text's unit vector from its hash (the child starts in a second)."""

    name, dim = "hash-384", 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        return [_unit(t) for t in texts]


def _unit(text: str) -> list[float]:
    v = np.random.default_rng(int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")).standard_normal(384)
    return (v / np.linalg.norm(v)).tolist()


def batch(n: int) -> tuple[list[Chunk], list[Interaction]]:
    day = 20230501 + n % 28
    chunks = [chunk(f"Doja Cat and Choupette, report {n}.{k}.", day, f"s{k % 5}") for k in range(PER_BATCH)]
    facts = [doja_and_choupette(c, f"Doja Cat met Choupette, sighting {n}.{k}", day) for k, c in enumerate(chunks)]
    return chunks, facts


def main(first: int) -> None:
    settings = Settings()
    store = GraphStore(open_graph(settings))
    store.init()
    mirror = open_mirror(settings, HashEmbedder())
    for n in itertools.count(first):
        chunks, interactions = batch(n)
        store.write_batch(
            chunks=chunks,
            entities=ENTITIES,
            mentions=[(c.id, e) for c in chunks for e in (DOJA, CHOUPETTE)],
            interactions=interactions,
        )
        mirror_from_graph(store, mirror, [i.id for i in interactions], [c.id for c in chunks])
        print(f"committed {n}", flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
