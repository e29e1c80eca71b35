"""Pure QA logic: query parsing, fusion, diversity, extractive answers."""

import numpy as np

from newskg.qa.answer import extractive
from newskg.qa.evidence import Evidence
from newskg.qa.fusion import mmr, rrf
from newskg.qa.query import _name_score, mention_of


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


def _mmr_by_definition(
    candidates: list[str], relevance: dict[str, float], vectors: dict[str, np.ndarray], k: int
) -> list[str]:
    """Greedy MMR as it was written before issue 30: every step takes each candidate's highest similarity again over
    everything picked so far."""
    top = max(relevance.values()) or 1.0
    picked: list[str] = []
    remaining = list(candidates)
    while remaining and len(picked) < k:

        def gain(item: str) -> float:
            rel = relevance.get(item, 0.0) / top
            if item not in vectors or not picked:
                return rel
            seen = [float(vectors[item] @ vectors[p]) for p in picked if p in vectors]
            return 0.7 * rel - 0.3 * (max(seen) if seen else 0.0)

        best = max(remaining, key=lambda item: (gain(item), -candidates.index(item)))
        picked.append(best)
        remaining.remove(best)
    return picked


def test_mmr_keeps_the_choices_of_its_definition():
    """mmr keeps each candidate's highest similarity up to date as items are picked (issue 30: a fifth of the CPU):
    the same choices as the definition, ties and all, with near-duplicates, exact duplicates, tied relevance and
    candidates without a vector."""
    rng = np.random.default_rng(30)
    for case in range(400):
        n = int(rng.integers(1, 45))
        ids = [f"i{j}" for j in range(n)]
        themes = rng.standard_normal((max(1, n // 3), 16)).astype(np.float32)
        vectors: dict[str, np.ndarray] = {}
        for j, item in enumerate(ids):
            if rng.random() < 0.9:  # the rest have no vector
                noise = 0.0 if rng.random() < 0.3 else 0.3  # exact duplicates of a theme, or near ones
                v = themes[j % len(themes)] + noise * rng.standard_normal(16).astype(np.float32)
                vectors[item] = (v / np.linalg.norm(v)).astype(np.float32)
        relevance = rrf([list(rng.permutation(ids)[: rng.integers(0, n + 1)]), ids[::2]])
        order = sorted(ids, key=lambda i: (-relevance.get(i, 0.0), i))
        k = int(rng.integers(1, 12))
        assert mmr(order, relevance, vectors, k) == _mmr_by_definition(order, relevance, vectors, k), case


def test_extractive_answer_is_labelled_and_dated():
    ev = [Evidence("i1", "interaction", "Doja Cat dressed as Choupette", 20230501, 20230502, 1.0, ["alpha", "beta"])]
    text = extractive("(Date: May 2, 2023) Doja Cat", ev)
    assert text.startswith("Extractive answer (no LLM)")
    assert "May 1, 2023: Doja Cat dressed as Choupette (alpha, beta)" in text


def test_entity_profile_counts_what_is_visible_as_of_the_day_in_both_views():
    from newskg.core.timeaxes import end_of_day_ms
    from newskg.graph.store.asof import AsOf
    from newskg.graph.store.rows import EntityCounts, EntityProfileRow, row_of
    from newskg.qa.query import EntityProfile

    # The graph's cells are (publication day, ingestion day, count): two chunks published and ingested on May 1;
    # one published May 1 but ingested June 3 (late); interactions: one on May 2, two published May 1 but ingested
    # on May 2. The profile bounds each by the last millisecond of its ingestion day.
    profile = EntityProfile.of_row(
        row_of(
            EntityProfileRow,
            {
                "id": "e1",
                "name": "Mercury",
                "type": "ORG",
                "chunk_cells": [[20230501, 20230501, 2], [20230501, 20230603, 1]],
                "interaction_cells": [[20230502, 20230502, 1], [20230501, 20230502, 2]],
            },
        )
    )
    assert profile.interaction_cells[1] == (20230501, end_of_day_ms(20230502), 2)

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


def test_a_date_in_the_query_is_read_in_every_format():
    import datetime as dt

    from newskg.qa.dates import find_date

    asked = dt.date(2023, 9, 5)
    aug31 = dt.date(2023, 8, 31)
    for query in (
        "Doja Cat on Aug 31 2023",
        "Doja Cat on August 31, 2023",
        "Doja Cat Aug. 31st, 2023",
        "Doja Cat 31 Aug 2023",
        "Doja Cat on the 31st of August 2023",
        "Doja Cat 2023-08-31",
        "Doja Cat 2023/08/31",
        "Doja Cat 8/31/2023",
        "Doja Cat 31/8/2023",
        "Doja Cat aug 31",  # no year: the latest Aug 31 on or before the asked day
    ):
        found = find_date(query, asked)
        assert found is not None and found.day == aug31, query
        assert found.rest == "Doja Cat", (query, found.rest)
    assert find_date("Doja Cat Dec 31", asked).day == dt.date(2022, 12, 31)  # Dec 31, 2023 is after the asked day
    assert find_date("doja cat tour news", asked) is None
    assert find_date("doja cat may tour", asked) is None  # a month name alone is a word, not a date
    assert find_date("doja cat 2023", asked) is None
    assert find_date("doja cat Feb 30 2023", asked) is None  # not a calendar day
    assert find_date("Sept 5 doja cat tour", asked).rest == "doja cat tour"


def test_the_reformulated_query_keeps_the_query_words():
    from newskg.qa.query import EntityChoice, ParsedQuery

    doja = EntityChoice("e1", "Doja Cat", "PERSON", 100.0, 3)
    layoffs = ParsedQuery("doja layoffs", 20230831, "doja", doja, topic="layoffs")
    tour = ParsedQuery("doja tour", 20230831, "doja", doja, topic="tour")
    assert layoffs.reformulated == "(Date: August 31, 2023) Doja Cat layoffs"
    assert tour.reformulated == "(Date: August 31, 2023) Doja Cat tour" != layoffs.reformulated
    assert layoffs.texts.forms == ["doja layoffs", "(Date: August 31, 2023) Doja Cat layoffs", "layoffs"]
    assert ParsedQuery("doja cat", 20230831, "doja cat", doja).reformulated == "(Date: August 31, 2023) Doja Cat"


def test_a_query_vector_is_made_of_its_forms_without_the_date_so_a_name_asked_on_any_day_is_one_text():
    """Issue 30: the day is the retrieval's filter and no stored text carries it, so it is not embedded; a bare
    name's forms are then one text whatever the day or the case typed, which the API's cache embeds once."""
    from newskg.qa.query import EntityChoice, ParsedQuery
    from newskg.qa.similarity import QueryTexts

    doja = EntityChoice("e1", "Doja Cat", "PERSON", 100.0, 3)
    bare = [ParsedQuery("doja cat", day, "doja cat", doja).texts for day in (20230831, 20231102)]
    assert [b.embedded for b in bare] == [["doja cat"], ["doja cat"]]
    assert bare[0].forms != bare[1].forms  # NEON's reformulation, shown and prompted, keeps its date
    layoffs = ParsedQuery("doja layoffs", 20230831, "doja", doja, topic="layoffs").texts
    assert layoffs.embedded == ["doja layoffs", "Doja Cat layoffs", "layoffs"]
    typed = QueryTexts("(Date: 2023-08-31) Doja Cat", "(Date: August 31, 2023) Doja Cat")
    assert typed.embedded == ["Doja Cat"]
    assert QueryTexts("(Date: August 31, 2023)", "(Date: August 31, 2023)").embedded == ["(Date: August 31, 2023)"]


def test_extractive_answer_picks_the_sentences_closest_to_the_question():
    from newskg.qa.similarity import QueryTexts

    evidence = [
        Evidence("c1", "chunk", "Doja Cat posted on Instagram. Fans replied.", 20230831, 20230831, 0.9, ["a"]),
        Evidence("c2", "chunk", "Doja Cat's label cut 200 jobs. The layoffs hit Los Angeles.", 20230830, 20230830),
    ]
    query = QueryTexts("doja cat layoffs", "(Date: August 31, 2023) Doja Cat layoffs", "layoffs")
    lines = extractive(query, evidence).splitlines()
    assert lines[1] == "- August 30, 2023: The layoffs hit Los Angeles."  # lexical: no embedder given
    assert len(lines) == 5 and lines[0].startswith("Extractive answer (no LLM)")  # four distinct sentences


def test_the_entity_is_looked_for_leftmost_then_longest():
    from newskg.qa.query import spans

    words = ["taylor", "swift", "american", "music", "awards"]
    order = [" ".join(words[a:b]) for a, b in spans(words)]
    assert order.index("taylor swift") < order.index("american music awards")  # the query leads with its entity
    assert order.index("taylor swift american") < order.index("taylor swift") < order.index("taylor")
    assert len(order) == 15  # every run once


class _CountingEmbedder:
    """A deterministic bag-of-words embedder that counts what it is asked to embed."""

    name = "counting"
    dim = 8

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [[float(sum(ord(c) for c in w) % 7 == d) + 0.01 for d in range(self.dim)] for w in texts]


def test_the_answer_reuses_retrievals_similarity_of_a_one_sentence_evidence_and_embeds_nothing():
    from newskg.qa.answer import best_sentences
    from newskg.qa.similarity import QueryTexts, Similarity

    query = QueryTexts("doja cat layoffs", "(Date: August 31, 2023) Doja Cat layoffs", "layoffs")
    texts = ["Doja Cat posted a photo", "Doja Cat's label cut 200 jobs", "Doja Cat went on tour"]
    cosines = [0.2, 0.9, 0.5]
    embedder = _CountingEmbedder()
    evidence = [
        Evidence(f"i{n}", "interaction", t, 20230831, similarity=Similarity(query, embedder.name, c))
        for n, (t, c) in enumerate(zip(texts, cosines, strict=True))
    ]
    chosen = best_sentences(query, evidence, embedder)
    assert [t for t, _ in chosen] == [texts[1], texts[2], texts[0]]  # by retrieval's cosines
    assert embedder.calls == []  # neither the evidence nor the query embedded again
    assert "similarity" not in evidence[0].as_dict()  # not part of the API's evidence


def test_the_apis_evidence_is_every_field_but_the_similarity_with_its_source_count_and_lists_of_its_own():
    from dataclasses import asdict

    from newskg.core.records import Variant
    from newskg.qa.similarity import QueryTexts, Similarity

    query = QueryTexts("doja cat", "(Date: August 31, 2023) Doja Cat", "")
    similarity = Similarity(query, "minilm", 0.4)
    item = Evidence("i1", "interaction", "Doja Cat toured", 20230831, 20230901, 0.7, ["AP", "BBC"], ["https://a/1"])
    item.variant, item.confidence, item.similarity = Variant.M0, 0.8, similarity
    shown = item.as_dict()
    expected = {k: v for k, v in asdict(item).items() if k != "similarity"} | {"n_sources": 2}
    assert shown == expected and list(shown) == list(expected)  # the same keys in the same order
    shown["sources"].append("CNN")
    shown["urls"].append("https://b/2")
    assert item.sources == ["AP", "BBC"] and item.urls == ["https://a/1"]  # the caller's copies, not the evidence's
    bare = Evidence("i2", "interaction", "Doja Cat toured", 20230831)
    assert bare.as_dict() == {k: v for k, v in asdict(bare).items() if k != "similarity"} | {"n_sources": 0}


def test_the_answer_embeds_what_retrieval_did_not_score_for_this_query_and_model():
    from newskg.qa.answer import best_sentences
    from newskg.qa.similarity import QueryTexts, Similarity

    query = QueryTexts("doja cat layoffs", "(Date: August 31, 2023) Doja Cat layoffs", "layoffs")
    other = QueryTexts("doja cat tour", "(Date: August 31, 2023) Doja Cat tour", "tour")
    embedder = _CountingEmbedder()
    evidence = [
        Evidence("i1", "interaction", "Doja Cat cut jobs", 20230831, similarity=Similarity(query, "counting", 0.5)),
        Evidence("i2", "interaction", "Doja Cat sang", 20230831, similarity=Similarity(other, "counting", 0.5)),
        Evidence("i3", "interaction", "Doja Cat slept", 20230831, similarity=Similarity(query, "another", 0.5)),
        Evidence(
            "c1", "chunk", "Doja Cat danced. Fans cheered.", 20230831, similarity=Similarity(query, "counting", 1)
        ),
    ]
    best_sentences(query, evidence, embedder)
    # The query once, then the sentences without a usable similarity: another query's, another model's, a chunk's.
    assert embedder.calls == [query.embedded, ["Doja Cat sang", "Doja Cat slept", "Doja Cat danced.", "Fans cheered."]]


def test_for_a_name_alone_the_answer_keeps_retrievals_order_of_the_facts_and_embeds_nothing():
    """Issue 30: a bare name is held by every fact of its entity, so similarity to it would only undo retrieval's
    salience order (the day's lead story first); a query with topic words, or chunk evidence, still ranks by it."""
    from newskg.qa.answer import best_sentences
    from newskg.qa.similarity import QueryTexts

    bare = QueryTexts("doja cat", "(Date: August 31, 2023) Doja Cat", "")
    texts = ["Doja Cat's label cut 200 jobs", "Doja Cat", "Doja Cat went on tour"]
    embedder = _CountingEmbedder()
    facts = [Evidence(f"i{n}", "interaction", t, 20230831) for n, t in enumerate(texts)]
    assert [t for t, _ in best_sentences(bare, facts, embedder)] == texts
    assert embedder.calls == []
    chunk = Evidence("c1", "chunk", "Fans cheered. Doja Cat sang.", 20230831)
    best_sentences(bare, [*facts, chunk], embedder)
    assert embedder.calls  # a chunk's sentences are still chosen by similarity
