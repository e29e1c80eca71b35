"""Pure QA logic: query parsing, fusion, diversity, extractive answers."""

import numpy as np

from qa.answer import extractive
from qa.evidence import Evidence
from qa.fusion import mmr, rrf
from qa.query import _name_score, mention_of


def test_mention_of_strips_telegraphic_filler():
    assert mention_of("doja cat news") == "doja cat"
    assert mention_of("latest updates about the Met Gala!") == "Met Gala"
    assert mention_of("news") == "news"  # nothing left: keep the query


def test_name_score_prefers_whole_names():
    assert _name_score("john ford", "john m ford") > _name_score("john ford", "ford")
    assert _name_score("doja", "doja cat") >= 75


def test_rrf_rewards_agreement():
    scores = rrf([["a", "b", "c"], ["b", "d"]])
    assert max(scores, key=scores.get) == "b"
    assert scores["a"] > scores["d"]


def test_mmr_skips_near_duplicates():
    v = {"a": np.array([1.0, 0.0]), "b": np.array([0.999, 0.045]), "c": np.array([0.0, 1.0])}
    v = {k: x / np.linalg.norm(x) for k, x in v.items()}
    picked = mmr(["a", "b", "c"], {"a": 1.0, "b": 0.95, "c": 0.6}, v, k=2)
    assert picked == ["a", "c"]
    assert mmr(["x", "y"], {"x": 1.0, "y": 0.5}, {}, k=5) == ["x", "y"]


def test_extractive_answer_is_labelled_and_dated():
    ev = [Evidence("i1", "interaction", "Doja Cat dressed as Choupette", 20230501, 20230502, 1.0, ["alpha", "beta"])]
    text = extractive("(Date: May 2, 2023) Doja Cat", ev)
    assert text.startswith("Extractive answer (no LLM)")
    assert "May 1, 2023: Doja Cat dressed as Choupette (alpha, beta)" in text
