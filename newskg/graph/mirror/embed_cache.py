"""Embedding once per distinct text.

The stream embeds the same texts again and again: chunks overlap, so the sentence two windows share yields the
same M0 interaction text in both, and an interaction written by one batch is mirrored again when a later batch's
chunk adds a provenance to it (the mirror is written from the graph's view of every id the batch touched).
`CachingEmbedder` keeps the vectors of the last `size` distinct texts, so each is embedded once; the one remembered
is the one the model gave for it (ONNX Runtime pads each batch, so the same text embedded in another batch may
differ by ~1e-5: a remembered vector is the first batch's, not a different one). Memory: `size` × dimensions × 8
bytes, ~3 KB a text for the local MiniLM (384 floats), ~12 KB for a 1,536-dimension endpoint model."""

from __future__ import annotations

import threading
from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from newskg.graph.mirror.embed import Embedder


class CachingEmbedder:
    """An `Embedder` over `inner` that remembers the last `size` distinct texts' vectors (float64: the exact values
    `inner` returned). Safe to share between threads (`serve --pipeline`: the stage and the API's queries)."""

    def __init__(self, inner: Embedder, size: int):
        self.inner = inner
        self.name = inner.name
        self.size = size
        self._vectors: OrderedDict[str, NDArray[np.float64]] = OrderedDict()
        self._lock = threading.Lock()
        self.embedded = 0  # texts `inner` was asked to embed (the tests read it)

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        """The vectors of `texts`, in order: remembered ones as they are, the others embedded in one call (each
        distinct text once)."""
        if not texts:
            return []
        found = self._known(texts)
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            computed = [np.asarray(v, dtype=np.float64) for v in self.inner.embed(missing)]
            self._remember(missing, computed)
            found.update(zip(missing, computed, strict=True))
        return [found[t].tolist() for t in texts]

    def _known(self, texts: list[str]) -> dict[str, NDArray[np.float64]]:
        found: dict[str, NDArray[np.float64]] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get(text)
                if vector is not None:
                    self._vectors.move_to_end(text)
                    found[text] = vector
        return found

    def _remember(self, texts: list[str], vectors: list[NDArray[np.float64]]) -> None:
        with self._lock:
            self.embedded += len(texts)
            if self.size <= 0:
                return
            for text, vector in zip(texts, vectors, strict=True):
                self._vectors[text] = vector
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)

    def forget(self) -> None:
        """Drop every remembered vector: the next text of each is embedded again (bench/qa_profile.py times a
        query's embedding cold this way)."""
        with self._lock:
            self._vectors.clear()
