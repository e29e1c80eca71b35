"""Embedding once per distinct text, and ahead of need.

The stream embeds the same texts again and again: chunks overlap, so the sentence two windows share yields the same
M0 interaction text in both, and an interaction written by one batch is mirrored again when a later batch's chunk
adds a provenance to it. `CachingEmbedder` keeps the vectors of the last `size` distinct texts, so each is embedded
once (a vector depends only on its text: the one remembered is the one the model would give again).

`prefetch` starts embedding texts in one background thread: the extract stage hands it its chunk texts before it
parses them, so the model (ONNX Runtime and the tokenizer release the GIL) runs on the core spaCy leaves idle, and
the mirror upsert after the graph write finds the vectors ready."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray

from graph.mirror.embed import Embedder

log = logging.getLogger(__name__)


class CachingEmbedder:
    """An `Embedder` over `inner` that remembers the last `size` distinct texts' vectors (float64: the exact values
    `inner` returned) and embeds texts ahead of need (`prefetch`). Safe to share between threads (`serve
    --pipeline`: the stage and the API's queries)."""

    def __init__(self, inner: Embedder, size: int):
        self.inner = inner
        self.name = inner.name
        self.size = size
        self._vectors: OrderedDict[str, NDArray[np.float64]] = OrderedDict()
        self._pending: dict[str, Future[None]] = {}
        self._lock = threading.Lock()
        self._worker: ThreadPoolExecutor | None = None
        self.embedded = 0  # texts `inner` embedded (the tests and the bench read it)

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

    def prefetch(self, texts: Iterable[str]) -> None:
        """Start embedding the texts not remembered yet, in the background; `embed` waits for them."""
        if self.size <= 0:
            return
        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self._vectors and t not in self._pending]
            if not todo:
                return
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embed-prefetch")
            future = self._worker.submit(self._fetch, todo)
            self._pending.update((t, future) for t in todo)

    def close(self) -> None:
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None

    def _fetch(self, texts: list[str]) -> None:
        try:
            computed = [np.asarray(v, dtype=np.float64) for v in self.inner.embed(texts)]
            self._remember(texts, computed)
        except Exception:  # the caller's `embed` embeds them itself, and sees the failure if it persists
            log.warning("embedding ahead failed; the texts will be embedded when needed", exc_info=True)
        finally:
            with self._lock:
                for text in texts:
                    self._pending.pop(text, None)

    def _known(self, texts: list[str]) -> dict[str, NDArray[np.float64]]:
        """The remembered vectors of `texts`, after waiting for those being embedded ahead."""
        with self._lock:
            waiting = {id(f): f for t in texts if (f := self._pending.get(t)) is not None}
        for future in waiting.values():
            future.exception()  # waits; a failure is logged by _fetch and the texts are embedded again
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
