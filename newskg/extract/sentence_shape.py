"""The shape of a sentence: news prose, or a list, a caption, a price line, a headline run. Both fitted models of
extract read it: the fact confidence (extract/openie/confidence.py, with where in the article the sentence stands)
and the name check (extract/entities/name_check.py, of the mention's sentence). Only parse shapes, no word of a
sample, so the models carry to pages they never saw."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from spacy.tokens import Span, Token

TERMINAL = (".", "!", "?", '"', "”", "’", "'", ")")

# The models' feature names for shape_features, in order; FEATURES of both models include them (and their fitted
# weights are keyed by these names, so renaming one means refitting).
PROSE_FEATURES: tuple[str, ...] = (
    "sentence_tokens_log",
    "sentence_ends_terminal",
    "sentence_proper_share",
    "sentence_capital_share",
    "sentence_number_share",
    "sentence_punct_share",
    "sentence_currency",
    "sentence_separator",
    "sentence_finite_verb",
)
PLACE_FEATURE = "sentence_index_log"  # where in the article: the confidence model only


@dataclass(frozen=True)
class SentenceShape:
    """The shape of a sentence: prose, or a list, a caption, a price line."""

    tokens: int
    ends_terminal: bool
    proper_share: float
    capital_share: float
    number_share: float
    punct_share: float
    currency: bool
    separator: bool  # ":" or "|" inside: a label, a breadcrumb, a headline list
    finite_verb: bool
    index_in_article: int = 0


def sentence_shape(sentence: Span, index_in_article: int = 0) -> SentenceShape:
    words = [t for t in sentence if not t.is_space]
    alpha = [t for t in words if t.is_alpha] or words
    return SentenceShape(
        tokens=len(words),
        ends_terminal=bool(words) and words[-1].text[-1:] in TERMINAL,
        proper_share=_share(alpha, lambda t: t.pos_ == "PROPN"),
        capital_share=_share(alpha, lambda t: t.text[:1].isupper()),
        number_share=_share(words, lambda t: t.like_num),
        punct_share=_share(words, lambda t: t.is_punct),
        currency=any(t.is_currency for t in words),
        separator=any(t.text in (":", "|") for t in words[1:-1]),
        finite_verb=any(t.tag_ in ("VBD", "VBZ", "VBP", "MD") for t in words),
        index_in_article=index_in_article,
    )


def prose_features(shape: SentenceShape) -> list[float]:
    """The shape as model inputs, in PROSE_FEATURES order."""
    return [
        math.log1p(shape.tokens),
        float(shape.ends_terminal),
        shape.proper_share,
        shape.capital_share,
        shape.number_share,
        shape.punct_share,
        float(shape.currency),
        float(shape.separator),
        float(shape.finite_verb),
    ]


def shape_features(shape: SentenceShape) -> list[float]:
    """PROSE_FEATURES, then PLACE_FEATURE: where in the article the sentence stands."""
    return [*prose_features(shape), math.log1p(shape.index_in_article)]


def _share(tokens: Sequence[Token], test: Callable[[Token], bool]) -> float:
    return sum(1 for t in tokens if test(t)) / len(tokens) if tokens else 0.0
