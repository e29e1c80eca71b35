"""The local MiniLM on ONNX Runtime: the same vectors as the sentence-transformers reference, in the callers' order,
from an export made once and cached under the data dir (graph/mirror/minilm_onnx.py)."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import numpy as np
import pytest

from newskg.core.settings import Settings
from newskg.graph.mirror import minilm_onnx
from newskg.graph.mirror.embed import MiniLMEmbedder
from newskg.graph.mirror.minilm_onnx import OnnxMiniLMEmbedder, ensure_exported, length_batches

LONG = " ".join(
    f"Paragraph {i}: the central bank raised its benchmark rate by half a point on Tuesday, citing inflation."
    for i in range(30)
)  # about 700 tokens: both backends must cut it at the model's max_seq_length (256)
SENTENCES = [
    "Doja Cat dressed as Choupette at the Met Gala on Monday.",
    "Jared Leto also arrived as Choupette, and posed with Anna Wintour before the dinner.",
    "WeWork is cutting 2,400 jobs as part of a plan to turn around the company.",
    "Google's Stadia launched on Tuesday with 22 games.",
    "Red Dead Redemption 2 runs at 30 frames per second on the service.",
    "The attorney general opened an investigation into the company's finances.",
    "Shares fell 3% in early trading.",
    "Rain.",
    "OK",
    "",
    " ",
    "\n\t",
    "?!",
    "1 2 3",
    "https://example.com/news/2019/11/18/story.html",
    "Émile Zola écrivit « J'accuse » en 1898 — naïve café.",
    "北京 is the capital of China.",
    LONG,
    LONG + " And a different ending after the cut.",  # identical to LONG once truncated
    *(f"Story {n}: the mayor of town number {n} announced a new budget for schools and roads." for n in range(15)),
]


@pytest.fixture(scope="module")
def onnx_embedder(tmp_path_factory: pytest.TempPathFactory) -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(tmp_path_factory.mktemp("data"), threads=2, batch_size=4)


@pytest.fixture(scope="module")
def reference() -> np.ndarray:
    return np.asarray(MiniLMEmbedder().embed(SENTENCES))


def test_onnx_vectors_match_the_torch_reference(onnx_embedder: OnnxMiniLMEmbedder, reference: np.ndarray):
    vectors = np.asarray(onnx_embedder.embed(SENTENCES))
    assert vectors.shape == (len(SENTENCES), 384)
    cosines = (vectors * reference).sum(axis=1)
    assert cosines.min() >= 0.99, dict(zip(SENTENCES, cosines.round(4), strict=True))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)  # normalised like the reference


def test_long_texts_are_truncated_at_the_models_max_length(onnx_embedder: OnnxMiniLMEmbedder):
    long, longer = onnx_embedder.embed([LONG, LONG + " And a different ending after the cut."])
    assert np.allclose(long, longer, atol=1e-6)


def test_length_batching_keeps_the_callers_order(onnx_embedder: OnnxMiniLMEmbedder):
    one_by_one = np.asarray([onnx_embedder.embed([text])[0] for text in SENTENCES])
    batched = np.asarray(onnx_embedder.embed(SENTENCES))  # batch_size 4: many batches, reordered by length
    assert np.allclose(batched, one_by_one, atol=1e-5)
    assert onnx_embedder.embed([]) == []


def test_length_batches_group_similar_lengths_and_cover_every_index():
    batches = length_batches([5, 1, 9, 3, 7], batch_size=2)
    assert batches == [[1, 3], [0, 4], [2]]


def test_a_second_embedder_reuses_the_cached_export(onnx_embedder: OnnxMiniLMEmbedder, monkeypatch: pytest.MonkeyPatch):
    first = onnx_embedder.model_path

    def no_export(folder: Path, target: Path) -> None:
        raise AssertionError("exported again although the cache holds the model")

    monkeypatch.setattr(minilm_onnx, "export_onnx", no_export)
    second = OnnxMiniLMEmbedder(onnx_embedder.data_dir)
    assert second.model_path == first
    assert first.is_relative_to(onnx_embedder.data_dir / "models" / "minilm-onnx")
    assert np.allclose(second.embed(["cached"]), onnx_embedder.embed(["cached"]))


def slow_fake_export(folder: Path, target: Path) -> None:
    with (target.parent.parent / "exports.log").open("a") as log:
        log.write(f"{target.name}\n")
    time.sleep(1.0)  # long enough that the other process arrives while this one holds the lock
    target.write_bytes(b"model")


def export_in_child(data_dir: Path) -> None:
    minilm_onnx.export_onnx = slow_fake_export  # forked: patches only this child
    ensure_exported(data_dir)


def test_two_processes_missing_the_cache_export_once(tmp_path: Path):
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=export_in_child, args=(tmp_path,)) for _ in range(2)]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
    assert [child.exitcode for child in children] == [0, 0]
    exports = (tmp_path / "models" / "minilm-onnx" / "exports.log").read_text().splitlines()
    assert len(exports) == 1  # the second process waited on the lock, then found the model
    model = minilm_onnx.cached_model_path(tmp_path)
    assert model.read_bytes() == b"model"
    assert not list(model.parent.glob("*.partial"))


def test_the_onnx_backend_is_the_default_and_torch_stays_selectable(tmp_path: Path):
    from newskg.wiring import open_embedder

    default = open_embedder(Settings(data_dir=tmp_path, _env_file=None))  # pyright: ignore[reportCallIssue]
    assert isinstance(default, OnnxMiniLMEmbedder)
    assert default.data_dir == tmp_path
    torch = open_embedder(Settings(data_dir=tmp_path, embed_backend="torch", embed_threads=1, _env_file=None))  # pyright: ignore[reportCallIssue]
    assert isinstance(torch, MiniLMEmbedder)
    threaded = open_embedder(Settings(data_dir=tmp_path, embed_threads=3, _env_file=None))  # pyright: ignore[reportCallIssue]
    assert isinstance(threaded, OnnxMiniLMEmbedder)
    assert threaded.threads == 3


def test_the_embedding_cache_hands_out_the_models_vectors(onnx_embedder: OnnxMiniLMEmbedder):
    """What the stage's cache returns (remembered from another batch) is what the model gives for the same texts:
    equal up to the float rounding a different batch composition brings."""
    from newskg.graph.mirror.embed_cache import CachingEmbedder

    cached = CachingEmbedder(onnx_embedder, size=100)
    cached.embed(SENTENCES[:5])
    got = np.asarray(cached.embed(SENTENCES + SENTENCES[:3]))
    direct = np.asarray(onnx_embedder.embed(SENTENCES + SENTENCES[:3]))
    assert got.shape == direct.shape
    assert np.abs(got - direct).max() < 1e-5
