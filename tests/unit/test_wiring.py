"""Ownership: the `Wiring` bundle closes every client it opened exactly once, last opened first, also after an
error; a stage never closes what it was given (the real clients: tests/integration/test_extract_stage.py,
test_serve_pipeline.py, test_qa.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from newskg import wiring as wiring_module
from newskg.core.settings import Settings
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.stage import ExtractOptions, ExtractStage
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.stage import ProcessStage
from newskg.wiring import Wiring


class Resource:
    def __init__(self, name: str, closed: list[str]):
        self.name, self.closed = name, closed

    def close(self) -> None:
        self.closed.append(self.name)


def settings(tmp_path: Path, **values: object) -> Settings:
    return Settings(data_dir=tmp_path, _env_file=None, **values)  # pyright: ignore[reportCallIssue]


def test_the_bundle_closes_each_resource_once_last_opened_first_also_after_an_error(tmp_path):
    closed: list[str] = []
    with pytest.raises(RuntimeError, match="a stage failed"), Wiring(settings(tmp_path)) as wiring:
        for name in ("graph", "mirror", "producer"):
            wiring.own(Resource(name, closed))
        raise RuntimeError("a stage failed")
    assert closed == ["producer", "mirror", "graph"]
    wiring.close()  # closing again closes nothing twice
    assert closed == ["producer", "mirror", "graph"]


def test_one_mirror_per_bundle_shared_by_every_user_and_closed_once(tmp_path, monkeypatch):
    closed: list[str] = []
    opened: list[object] = []

    def open_mirror(_settings: Settings, embedder: object) -> Resource:
        opened.append(embedder)
        return Resource("mirror", closed)

    embedder = SimpleNamespace(name="the embedder")
    monkeypatch.setattr(wiring_module, "open_embedder", lambda _settings: embedder)
    monkeypatch.setattr(wiring_module, "open_mirror", open_mirror)
    with Wiring(settings(tmp_path)) as wiring:
        assert wiring.mirror() is wiring.mirror()  # serve --pipeline: the QA service and the stage share it
        # the bundle's one embedder, remembering recent texts' vectors (graph/mirror/embed_cache.py)
        assert [getattr(e, "inner", None) for e in opened] == [embedder] and closed == []
    assert closed == ["mirror"]


def test_a_consumer_that_cannot_be_built_gives_its_member_lease_back(tmp_path, monkeypatch):
    import newskg.ingest.kafka.consumer as consumer_module
    import newskg.ingest.kafka.membership as membership_module

    released: list[str] = []
    member = SimpleNamespace(release=lambda: released.append("lease"))
    monkeypatch.setattr(membership_module, "claim_member", lambda *_args: member)

    def no_broker(*_args: object, **_kwargs: object) -> None:
        raise ConnectionError("no broker")

    monkeypatch.setattr(consumer_module, "GroupConsumer", no_broker)
    with Wiring(settings(tmp_path, kafka_bootstrap="127.0.0.1:1")) as wiring, pytest.raises(ConnectionError):
        wiring.consumer("newskg-process", "process", ["articles"])
    assert released == ["lease"]


def test_the_extract_stage_never_closes_the_mirror_it_was_given():
    closed: list[str] = []
    stage = ExtractStage(
        store=SimpleNamespace(conn=None),  # pyright: ignore[reportArgumentType] - m0 reads nothing from it
        extractor=ChunkExtractor(Linker(AliasIndex())),
        options=ExtractOptions(),
        mirror=Resource("mirror", closed),  # pyright: ignore[reportArgumentType] - only close() is observed
    )
    stage.close()
    assert closed == [] and not hasattr(stage, "owns_mirror")


def test_the_process_stage_never_closes_the_signature_log_it_was_given(tmp_path):
    closed: list[str] = []
    log = Resource("signature log", closed)
    log.replay = lambda _index: None  # pyright: ignore[reportAttributeAccessIssue]
    s = settings(tmp_path)
    stage = ProcessStage(s, DedupIndex(s.dedup_threshold, s.dedup_num_perm, s.dedup_window_days), log)  # pyright: ignore[reportArgumentType]
    stage.close()
    assert closed == []
