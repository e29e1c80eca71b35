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


def test_entity_profile_counts_what_is_visible_as_of_the_day_in_both_views():
    from core.timeaxes import end_of_day_ms
    from graph.store.asof import AsOf
    from graph.store.rows import EntityCounts, EntityProfileRow, row_of
    from qa.query import EntityProfile

    # Two chunks published and ingested on May 1; one published May 1 but ingested June 3 (late); interactions:
    # one on May 2, two published May 1 but ingested at the last millisecond of May 2.
    profile = EntityProfile.of_row(
        row_of(
            EntityProfileRow,
            {
                "id": "e1",
                "name": "Mercury",
                "type": "ORG",
                "chunk_cells": [[20230501, end_of_day_ms(20230501) - 5, 2], [20230501, end_of_day_ms(20230603), 1]],
                "interaction_cells": [
                    [20230502, end_of_day_ms(20230502) - 1, 1],
                    [20230501, end_of_day_ms(20230502), 2],
                ],
            },
        )
    )

    def counts(day: int, view: str = "ingested") -> tuple[int, int] | None:
        row = profile.as_of(AsOf(day, view))
        return row and (row.mentions, row.interactions)

    assert counts(20230430) is None and counts(20230430, "published") is None  # nothing published yet
    assert counts(20230501) == (2, 0)  # the May 2 ingestion of May 1's facts is not known on May 1
    assert counts(20230501, "published") == (3, 2)  # the publication view counts the late chunk and facts
    assert counts(20230502) == (2, 3)  # ingested at the day's last millisecond: known that day
    assert counts(20230602) == (2, 3) and counts(20230603) == (3, 3)  # the late chunk from its ingestion day
    assert profile.as_of(AsOf(20230603)) == EntityCounts("e1", "Mercury", "ORG", mentions=3, interactions=3)
    only_late = EntityProfile("e2", "Late", "PERSON", ((20230501, end_of_day_ms(20230603), 1),), ())
    assert only_late.as_of(AsOf(20230510)) is None  # a candidate only once something naming it is known
    late = only_late.as_of(AsOf(20230510, "published"))
    assert late is not None and late.mentions == 1
