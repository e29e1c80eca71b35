"""Embedding once per distinct text (graph/mirror/embed_cache.py): the vectors handed out are
the ones the wrapped embedder gave for the same texts, and the mirror written through it holds the same points."""

from __future__ import annotations

import hashlib
import threading

import pytest
from qdrant_client import QdrantClient

from newskg.core.ids import point_uuid
from newskg.graph.mirror.embed_cache import CachingEmbedder
from newskg.graph.mirror.qdrant import CHUNKS, INTERACTIONS, QdrantClientMirror
from tests.support.records import dated_chunk as chunk
from tests.support.records import doja_and_choupette


class HashEmbedder:
    """Deterministic vectors from a text's hash; records every text it was asked to embed."""

    name = "hash"
    dim = 8

    def __init__(self, fail: bool = False):
        self.calls: list[list[str]] = []
        self.fail = fail
        self.lock = threading.Lock()

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self.lock:
            self.calls.append(list(texts))
        if self.fail:
            raise RuntimeError("model unavailable")
        return [vector(t) for t in texts]

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


def vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [b / 255 + 1 / 3 for b in digest[:8]]  # not exact in binary: the values must come back bit for bit


TEXTS = ["Doja Cat met Choupette.", "Jared Leto arrived.", "Doja Cat met Choupette.", "Rain."]


def test_each_distinct_text_is_embedded_once_with_the_inner_vector():
    inner = HashEmbedder()
    cached = CachingEmbedder(inner, size=100)
    assert cached.embed(TEXTS) == [vector(t) for t in TEXTS]
    assert cached.embed(TEXTS[:2]) == [vector(t) for t in TEXTS[:2]]
    assert inner.calls == [["Doja Cat met Choupette.", "Jared Leto arrived.", "Rain."]]
    assert cached.embed([]) == [] and cached.name == "hash" and cached.dim == 8


def test_the_least_recently_used_texts_are_forgotten_beyond_the_size():
    inner = HashEmbedder()
    cached = CachingEmbedder(inner, size=2)
    cached.embed(["a", "b"])
    cached.embed(["a"])  # a is now the most recent
    cached.embed(["c"])  # b goes
    assert cached.embed(["a", "b", "c"]) == [vector("a"), vector("b"), vector("c")]
    assert inner.calls == [["a", "b"], ["c"], ["b"]]


def test_size_zero_remembers_nothing():
    inner = HashEmbedder()
    cached = CachingEmbedder(inner, size=0)
    assert cached.embed(["a", "a"]) == [vector("a"), vector("a")]
    assert cached.embed(["a"]) == [vector("a")]
    assert inner.calls == [["a"], ["a"]]


def test_a_failure_remembers_nothing_and_raises():
    inner = HashEmbedder(fail=True)
    cached = CachingEmbedder(inner, size=10)
    with pytest.raises(RuntimeError, match="model unavailable"):
        cached.embed(["a"])
    inner.fail = False
    assert cached.embed(["a"]) == [vector("a")]
    assert cached.embedded == 1


def test_threads_sharing_it_get_the_inner_vectors():
    """Each thread gets, text for text and in its own order, the vectors the inner embedder gives."""
    cached = CachingEmbedder(HashEmbedder(), size=20)
    texts = [f"text {n % 30}" for n in range(200)]
    results: dict[int, list[list[float]]] = {}

    def rotated(offset: int) -> list[str]:
        return texts[offset:] + texts[:offset]

    def work(offset: int) -> None:
        results[offset] = cached.embed(rotated(offset))

    threads = [threading.Thread(target=work, args=(n * 7,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [n * 7 for n in range(6)]
    for offset, got in results.items():
        assert got == [vector(t) for t in rotated(offset)], offset


def test_forget_drops_every_remembered_vector_so_the_next_embedding_is_cold():
    cached = CachingEmbedder(HashEmbedder(), size=10)
    cached.embed(["a", "b"])
    cached.embed(["a"])
    assert cached.embedded == 2
    cached.forget()
    cached.embed(["a"])
    assert cached.embedded == 3


def mirror_points(mirror: QdrantClientMirror, collection: str, ids: list[str]):
    points = mirror.client.retrieve(mirror.name(collection), [point_uuid(i) for i in ids], with_vectors=True)
    return {str(p.id): ({k: v for k, v in (p.payload or {}).items() if k != "mirrored_ms"}, p.vector) for p in points}


def test_one_upsert_of_both_collections_writes_the_points_of_separate_upserts():
    """The stage's one embedding call per batch (interactions and chunks together, through the cache) writes the
    points the separate upserts with the bare embedder wrote: same ids, payloads and vectors."""
    chunks = [chunk(f"Doja Cat dressed as Choupette, report {n}.", 20230502 + n) for n in range(3)]
    interactions = [doja_and_choupette(c, "Doja Cat dressed as Choupette", 20230501) for c in chunks]
    interactions += [doja_and_choupette(chunks[0], "Doja Cat met Choupette", 20230502)]
    items = [(c, ["e1", "e2"], ["s1"]) for c in chunks]
    separate = QdrantClientMirror(QdrantClient(":memory:"), HashEmbedder())
    together = QdrantClientMirror(QdrantClient(":memory:"), CachingEmbedder(HashEmbedder(), size=100))
    for mirror in (separate, together):
        mirror.ensure()
    assert separate.upsert_interactions(interactions) == 2 and separate.upsert_chunks(items) == 3
    together.embedder.embed([interactions[0].text])  # remembered from an earlier batch
    assert together.upsert_both(interactions, items) == (2, 3)
    for collection, ids in ((INTERACTIONS, [i.id for i in interactions]), (CHUNKS, [c.id for c in chunks])):
        assert mirror_points(together, collection, ids) == mirror_points(separate, collection, ids)
        assert len(mirror_points(together, collection, ids)) == len(set(ids))
