"""The PERSON/ORG name check (extract/entities/name_check.py): its features read the mention's shape and parse, its
fitted model matches its features, and a doubted mention is left out while the rest of the chunk's are kept."""

from dataclasses import replace

import pytest

from newskg.extract.entities.mentions import RawMention, find_mentions
from newskg.extract.entities.name_check import FEATURES, SIGNALS, doubtful, mention_features, model
from newskg.extract.entities.rules import EntityRules
from newskg.extract.nlp import pipeline

WITHOUT_CHECK = replace(EntityRules(), name_check=False)


def _mention(doc, text: str, kind: str, source: str = "model") -> RawMention:
    start = doc.text.index(text)
    span = doc.char_span(start, start + len(text))
    assert span is not None
    return RawMention(span.start_char, span.end_char, span.text, kind, span.start, span.end, source)


def _signal(features: list[float], kind: str, name: str) -> float:
    return features[FEATURES.index(f"{kind.lower()}:{name}")]


def test_the_fitted_model_reads_the_features_the_code_computes():
    found = model()
    assert len(found.weights) == len(FEATURES) == 2 * len(SIGNALS)
    assert set(found.thresholds) == {"PERSON", "ORG"}
    assert all(0.0 <= t < 1.0 for t in found.thresholds.values())


def test_a_mentions_signals_stand_on_its_types_side_only():
    doc = pipeline()("Angela Merkel met the board of Siemens in Berlin.")
    person = mention_features(doc, _mention(doc, "Angela Merkel", "PERSON"))
    org = mention_features(doc, _mention(doc, "Siemens", "ORG"))
    half = len(SIGNALS)
    assert person[0] == 1.0 and not any(person[half:])
    assert org[half] == 1.0 and not any(org[:half])


def test_features_read_shape_and_context():
    doc = pipeline()("Toyota unveiled the RAV4 Prime 2 at the show. She said Jane Smith of Acme Corp agreed.")
    rav = mention_features(doc, _mention(doc, "RAV4 Prime", "ORG"))
    assert _signal(rav, "ORG", "has_digit") == 1.0
    assert _signal(rav, "ORG", "next_digit") == 1.0
    assert _signal(rav, "ORG", "after_determiner") == 1.0
    jane = mention_features(doc, _mention(doc, "Jane Smith", "PERSON"))
    assert _signal(jane, "PERSON", "first_name") == 1.0
    acme = mention_features(doc, _mention(doc, "Acme Corp", "ORG"))
    assert _signal(acme, "ORG", "org_designator") == 1.0


def test_a_capitalised_word_whose_lower_case_form_is_in_the_chunk_is_flagged():
    doc = pipeline()("Meth. We're on it, the campaign says about meth in the state.")
    meth = mention_features(doc, _mention(doc, "Meth", "PERSON"))
    assert _signal(meth, "PERSON", "lower_form_in_chunk") == 1.0


def test_other_types_are_never_doubted():
    doc = pipeline()("Prices rose in Paris on Monday.")
    assert doubtful(doc, _mention(doc, "Paris", "PLACE")) is None


@pytest.mark.parametrize(
    "text",
    [
        "Tom Hanks told reporters in Los Angeles that Microsoft would fund the film.",
        "Meth. We're on it. The campaign against meth drew a mix of ridicule across Twitter on Monday.",
        "Save $31 if you get a turquoise Switch Lite with your choice of Pokemon Sword or Shield and a case.",
    ],
)
def test_the_check_only_removes_mentions_it_doubts(text):
    doc = pipeline()(text)
    unchecked = find_mentions(doc, rules=WITHOUT_CHECK)
    checked = find_mentions(doc)
    expected = [m for m in unchecked if doubtful(doc, m) is None]
    assert checked == expected
    assert all(m.type in {"PERSON", "ORG"} for m in unchecked if m not in checked)  # only those are checked


def test_a_clear_person_who_speaks_is_kept():
    doc = pipeline()("Tom Hanks told reporters in Los Angeles that he would return next year.")
    names = [m.name for m in find_mentions(doc) if m.type == "PERSON"]
    assert "Tom Hanks" in names
