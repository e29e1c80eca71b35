"""The query's vector for one retrieval (qa/retrieve.py), shared by the reads of its strategy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from newskg.graph.mirror.base import VectorMirror
from newskg.qa.similarity import QueryTexts, Similarity, Vector, query_vector


class QueryVector:
    """The query's vector for one retrieval: embedded on first use (never when no read needs it), then shared, so a
    retrieval embeds the query once; the Similarity its cosines are, for the evidence; and the mirror's vectors the
    retrieval read, each read once (hybrid scores the day's facts by them, then diversifies the fused list by them,
    and its semantic search returns its hits' vectors with them). Each is kept as float32 once, as it is read: the
    cosines and MMR's dot products use the values that converting the mirror's float lists at each use gave them."""

    def __init__(self, mirror: VectorMirror | None, query: QueryTexts):
        self.mirror, self.query = mirror, query
        self._vector: Vector | None = None
        self._stored: dict[str, dict[str, Vector]] = {}  # collection → graph id → the mirror's vector (float32)

    def stored(self, collection: str, ids: Sequence[str]) -> dict[str, Vector]:
        """The mirror's vectors of these ids (those it holds), reading only the ones this retrieval has not."""
        assert self.mirror is not None, "stored vectors need the mirror"
        known = self._stored.setdefault(collection, {})
        unread = [i for i in dict.fromkeys(ids) if i not in known]
        if unread:
            self.remember(collection, self.mirror.vectors(collection, unread))
        return {i: known[i] for i in ids if i in known}

    def remember(self, collection: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Keep these vectors (the mirror's, or embedded for texts it lacks) for this retrieval's other reads."""
        if vectors:  # one conversion for all: ~6 µs a vector, where each use converted them again before
            rows = np.asarray(list(vectors.values()), dtype=np.float32)
            self._stored.setdefault(collection, {}).update(zip(vectors, rows, strict=True))

    def __call__(self) -> Vector:
        if self._vector is None:
            assert self.mirror is not None, "a query vector needs the mirror's embedder"
            self._vector = query_vector(self.mirror.embedder, self.query)
        return self._vector

    def similarity(self, cosine: float) -> Similarity | None:
        """A cosine to this vector, for the answer; None without a mirror (the score is then lexical)."""
        return Similarity(self.query, self.mirror.embedder.name, cosine) if self.mirror is not None else None
