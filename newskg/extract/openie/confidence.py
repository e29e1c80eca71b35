"""How far a reader can trust an M0 fact: a logistic model over what the rules knew when they made it (which rule,
which strict checks it failed, its subject's type, how long it is) and what its sentence looks like (news prose or
navigation, captions and shopping copy: length, capitals, numbers, currency, a finite verb, where in the article).

The weights (`confidence_model.json`) are fitted by `bench/fit_confidence.py` on the labelled facts of `newskg eval
facts` (bench/data/fact_labels.jsonl; label: clean on all three questions) and measured there out of sample, by
page. No word of the sample is a feature: only parse shapes, so the model carries to pages it never saw. A fact
below `NEWSKG_EXTRACT_MIN_CONFIDENCE` is not written (extract/chunk_extractor.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from spacy.tokens import Span

from newskg.extract.logistic import LogisticModel, load
from newskg.extract.openie.clauses import DOUBTS, RULES
from newskg.extract.sentence_shape import PLACE_FEATURE, PROSE_FEATURES, SentenceShape, shape_features

MODEL_FILE = Path(__file__).with_name("confidence_model.json")
SUBJECT_TYPES = ("PERSON", "ORG", "PLACE")  # the linker's types (extract/entities/types.py), not spaCy's GPE


@dataclass(frozen=True)
class FactSignals:
    """What one M0 fact is made of, as the extractor saw it."""

    rule: str
    doubts: frozenset[str]
    subject_type: str
    subject_words: int
    text: str
    has_object: bool
    sentence: SentenceShape
    pronouns: int = 0  # pronouns_in(sentence, text)
    whole_sentence: bool = False  # the text is its whole sentence, not a clause cut from it (sentence_text.py)


def pronouns_in(sentence: Span, text: str) -> int:
    """The sentence's pronouns the fact repeats ("it", "this", "her"): words a reader of the fact alone cannot
    resolve."""
    words = set(text.lower().split())
    return sum(1 for t in sentence if t.pos_ == "PRON" and t.lower_ in words)


FEATURES: tuple[str, ...] = (
    *(f"rule={r}" for r in RULES),
    *(f"doubt={d}" for d in DOUBTS),
    *(f"subject={t}" for t in SUBJECT_TYPES),
    "subject_one_word",
    "fact_pronouns",
    "has_object",
    "fact_words_log",
    "fact_short",
    "fact_has_digit",
    "fact_whole_sentence",
    *PROSE_FEATURES,
    PLACE_FEATURE,
)


def features(s: FactSignals) -> list[float]:
    """The model's inputs, in FEATURES order."""
    words = len(s.text.split())
    return [
        *(float(s.rule == r) for r in RULES),
        *(float(d in s.doubts) for d in DOUBTS),
        *(float(s.subject_type == t) for t in SUBJECT_TYPES),
        float(s.subject_words == 1),
        float(s.pronouns),
        float(s.has_object),
        math.log1p(words),
        float(words < 5),
        float(any(c.isdigit() for c in s.text)),
        float(s.whole_sentence),
        *shape_features(s.sentence),
    ]


@cache
def model() -> LogisticModel:
    return load(MODEL_FILE, FEATURES, "bench/fit_confidence.py")[0]


def confidence(signals: FactSignals) -> float:
    """The fitted probability that a reader finds the fact clean (readable, true to its chunk, right subject)."""
    return round(model().score(features(signals)), 3)
