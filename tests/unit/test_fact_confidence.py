"""Each M0 fact carries a confidence from the rules that made it (extract/openie/confidence.py): fitted, read by
the extractor, and the floor NEWSKG_EXTRACT_MIN_CONFIDENCE keeps below it unwritten."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.openie import confidence as conf
from newskg.extract.openie.confidence import FEATURES, FactSignals, confidence, features
from newskg.extract.sentence_shape import SentenceShape
from tests.unit.test_determinism import chunk

PROSE = SentenceShape(24, True, 0.2, 0.2, 0.0, 0.1, False, False, True, 3)
CLEAN = FactSignals(
    "subject", frozenset(), "PERSON", 2, "Officers arrested Christopher D. Battin on Tuesday", False, PROSE
)
NEWS = chunk(
    "Police officers arrested Christopher Battin in Denver on Tuesday. Mayor Michael Hancock thanked the officers "
    "for their quick work. Battin will appear in court next week.",
    20230505,
    5_000,
    "a_news",
)


def test_the_fitted_model_reads_the_features_the_extractor_computes():
    data = json.loads(conf.MODEL_FILE.read_text(encoding="utf-8"))
    assert tuple(data["features"]) == FEATURES and len(data["weights"]) == len(FEATURES)
    assert len(features(CLEAN)) == len(FEATURES)
    assert 0.0 < confidence(CLEAN) < 1.0


def test_a_fact_in_the_writers_voice_or_from_a_price_line_is_trusted_less():
    """(A cut name no longer reaches the model: wide rules drop such a clause, extract/openie/clauses.DROPPED.)"""
    price_line = replace(PROSE, ends_terminal=False, currency=True, finite_verb=False, tokens=9)
    assert confidence(replace(CLEAN, doubts=frozenset({"writer_voice"}))) < confidence(CLEAN)
    assert confidence(replace(CLEAN, sentence=price_line)) < confidence(CLEAN)


def test_every_m0_fact_carries_its_confidence_and_the_floor_keeps_the_rest_unwritten():
    (all_facts,) = ChunkExtractor(Linker(AliasIndex())).offline([NEWS])
    assert all_facts.interactions, "the chunk states facts"
    scores = [i.confidence for i in all_facts.interactions]
    assert all(s is not None and 0.0 <= s <= 1.0 for s in scores)
    assert set(all_facts.signals) == {i.id for i in all_facts.interactions}
    floor = sorted(s for s in scores if s is not None)[len(scores) // 2]
    (kept,) = ChunkExtractor(Linker(AliasIndex()), min_confidence=floor).offline([NEWS])
    assert {i.id for i in kept.interactions} == {i.id for i in all_facts.interactions if (i.confidence or 0) >= floor}


def test_a_model_fitted_on_other_features_is_refused(tmp_path, monkeypatch):
    stale = tmp_path / "model.json"
    stale.write_text(json.dumps({"features": ["rule=pair"], "weights": [1.0], "bias": 0.0}), encoding="utf-8")
    monkeypatch.setattr(conf, "MODEL_FILE", stale)
    conf.model.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="fit_confidence"):
            conf.model()
    finally:
        conf.model.cache_clear()
