"""The offline proxies (no LLM): exact on constructed inputs, and never reported under a judge's name."""

import pytest

from newskg.evaluation.neon.judges import ATTRIBUTES, EvidenceItem
from newskg.evaluation.neon.proxies import (
    content_tokens,
    date_precision,
    is_subject,
    offline_proxies,
    other_entities,
    spacy_entities,
)
from newskg.qa.evidence import Evidence


def ev(day: int, text: str = "x") -> EvidenceItem:
    return EvidenceItem(text, day, "interaction")


@pytest.mark.parametrize(
    ("radius", "expected"),
    [(0, 1 / 6), (1, 3 / 6), (2, 4 / 6), (3, 6 / 6)],
)
def test_date_precision_counts_evidence_within_r_calendar_days_of_the_query_day(radius, expected):
    days = [20230301, 20230228, 20230302, 20230227, 20230226, 20230304]  # across a month end: 0,1,1,2,3,3 days
    assert date_precision(20230301, [ev(d) for d in days], radius) == pytest.approx(expected)


def test_date_precision_is_undefined_without_evidence():
    assert date_precision(20230301, [], 1) is None
    scores = offline_proxies("q", 20230301, "", [], subject="Doja Cat", entities=lambda _: ())
    assert (scores.date_precision, scores.evidence_entity_coverage, scores.supported_token_share) == (None,) * 3


@pytest.mark.parametrize(
    ("mention", "subject", "same"),
    [
        ("Doja Cat", "Doja Cat", True),
        ("Cat", "Doja Cat", True),  # a short form inside the subject's name
        ("Doja Cat's", "Doja Cat", True),  # the subject's name inside the mention
        ("DOJA  CAT", "doja cat", True),
        ("Catherine Zeta-Jones", "Doja Cat", False),  # whole words only
        ("Ice Spice", "Doja Cat", False),
    ],
)
def test_a_mention_is_the_subject_when_one_name_contains_the_other_in_whole_words(mention, subject, same):
    from newskg.extract.entities.names import name_key

    assert is_subject(name_key(mention), name_key(subject)) is same


def test_entity_coverage_beyond_the_subject_with_a_given_entity_finder():
    found = {
        "A": ["Doja Cat", "Ice Spice"],
        "B": ["Doja Cat"],
        "C": [],
        "D": ["Cat", "Paris"],
        "Doja Cat met Ice Spice.": ["Doja Cat", "Ice Spice"],
        "She sang.": [],
        "Doja Cat toured.": ["Doja Cat"],
        "Then Paris and Ice Spice.": ["Paris", "Ice Spice"],
    }
    answer = "Doja Cat met Ice Spice. She sang. Doja Cat toured. Then Paris and Ice Spice."
    found[answer] = ["Doja Cat", "Ice Spice", "Doja Cat", "Paris", "Ice Spice"]
    evidence = [ev(20230829, t) for t in "ABCD"]
    scores = offline_proxies(
        "doja cat news", 20230829, answer, evidence, subject="Doja Cat", entities=found.__getitem__
    )
    assert scores.evidence_entity_coverage == 2 / 4  # A (Ice Spice) and D (Paris)
    assert scores.answer_entity_coverage == 2 / 4  # the first and the last sentence
    assert scores.answer_other_entities == 2  # ice spice, paris: distinct


def test_the_subject_defaults_to_the_query_text():
    scores = offline_proxies("doja cat tour", 20230829, "", [ev(20230829, "A")], entities=lambda _: ["Doja Cat"])
    assert scores.evidence_entity_coverage == 0.0


def test_the_default_entity_finder_is_the_projects_spacy_ner():
    assert spacy_entities("Angela Merkel met Emmanuel Macron in Paris on Tuesday.") == (
        "Angela Merkel",
        "Emmanuel Macron",
        "Paris",
    )
    assert other_entities(spacy_entities("Angela Merkel met Emmanuel Macron in Paris."), "Merkel") == {
        "emmanuel macron",
        "paris",
    }


def test_content_tokens_are_lowercased_spacy_tokens_without_stopwords_or_punctuation():
    assert content_tokens("On August 28, 2023 Doja Cat's tour wasn't in the U.S. -- at all!") == [
        "august",
        "28",
        "2023",
        "doja",
        "cat",
        "tour",
        "u.s.",
    ]


def test_supported_token_share_counts_answer_tokens_found_in_the_evidence_or_its_dates():
    evidence = [ev(20230828, "Doja Cat announced a tour with Ice Spice."), ev(20230827, "Fans criticised her.")]
    answer = "As of August 29, 2023: on August 28 Doja Cat announced a stadium tour; fans cheered."
    # content tokens: august 29 2023 august 28 doja cat announced stadium tour fans cheered (12)
    # unsupported: stadium, cheered ("29" and "2023" come from the query day, "28" from the evidence day)
    scores = offline_proxies("doja cat", 20230829, answer, evidence, subject="Doja Cat", entities=lambda _: ())
    assert scores.n_answer_tokens == 12
    assert scores.supported_token_share == pytest.approx(10 / 12)


def test_proxies_take_qa_evidence_and_report_only_under_proxy_names():
    evidence = [Evidence(id="i1", kind="chunk", text="Doja Cat met Ice Spice.", event_day=20230829)]
    scores = offline_proxies("doja cat", 20230829, "Doja Cat met Ice Spice.", evidence, subject="Doja Cat")
    report = scores.as_dict()
    assert all(key.startswith("proxy_") for key in report)
    assert not set(report) & set(ATTRIBUTES)
    assert (report["proxy_date_precision"], report["proxy_supported_token_share"]) == (1.0, 1.0)
