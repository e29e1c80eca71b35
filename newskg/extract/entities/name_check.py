"""Whether a PERSON or ORG mention is a real name of that type: a logistic model over the mention's shape and its
place in the sentence, for the small spaCy model's usual errors: products typed ORG ("Stadia", "RAV4 Prime"),
common words at a sentence's start or in a list ("Meth", "Specs"), places, events and span fragments.

No word of any sample is a feature: only the mention's shape (words, capitals, digits, an acronym), the project's
general word lists (first names, organisation, place and event designators, titles), the parse (its dependency
role, what it modifies, what follows it, a determiner before it), how the rules found it, and the shape of its
sentence (a list or shopping copy rather than prose). The weights (`name_model.json`) are fitted by
`bench/fit_names.py` on the entity gold set and the labelled mentions of `newskg eval facts` (news pages only),
cross-validated by document; a mention scored below the model's threshold is not kept as a PERSON or ORG
(`EntityRules.name_check`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from typing import Protocol

from spacy.tokens import Doc, Span

from newskg.extract.entities.evidence import EVENT_DESIGNATORS, ORG_DESIGNATORS, PLACE_DESIGNATORS, first_names
from newskg.extract.entities.names import TITLES, tokens_of
from newskg.extract.logistic import LogisticModel, load
from newskg.extract.sentence_shape import PROSE_FEATURES, prose_features, sentence_shape

MODEL_FILE = Path(__file__).with_name("name_model.json")
CHECKED_TYPES = frozenset({"PERSON", "ORG"})
SOURCES = ("model", "known", "repeat", "plural", "coordinated")
SUBJECT_ROLES = frozenset({"nsubj", "nsubjpass"})
OBJECT_ROLES = frozenset({"dobj", "pobj", "attr", "dative"})


class Candidate(Protocol):
    """What the check reads of a mention (mentions.RawMention)."""

    @property
    def type(self) -> str: ...
    @property
    def token_start(self) -> int: ...
    @property
    def token_end(self) -> int: ...
    @property
    def source(self) -> str: ...
    @property
    def vote(self) -> int: ...
    @property
    def name(self) -> str: ...


SIGNALS: tuple[str, ...] = (
    "bias",
    *(f"source={s}" for s in SOURCES),
    "type_evidence",
    "words_one",
    "words_log",
    "chars_short",
    "acronym",
    "has_digit",
    "inner_capital",
    "lower_word_inside",
    "first_name",
    "org_designator",
    "place_designator",
    "event_designator",
    "after_determiner",
    "after_title",
    "sentence_start",
    "next_digit",
    "next_capitalised",
    "next_possessive",
    "modifies_noun",
    "role_subject",
    "role_object",
    "role_possessor",
    "role_conjunct",
    "agent_of_verb",
    "model_agrees",
    "lower_form_in_chunk",
    "repeats_in_chunk",
    *PROSE_FEATURES,
)
# One weight per signal and type: PERSON's errors (common words, places, fragments) are not ORG's (products,
# venues, events), and one set of weights for both measured worse (cross-validated AUC 0.77 against 0.78).
FEATURES: tuple[str, ...] = tuple(f"{kind.lower()}:{signal}" for kind in ("PERSON", "ORG") for signal in SIGNALS)


def _flag(value: bool) -> float:
    return 1.0 if value else 0.0


def _shape(words: Sequence[str]) -> list[float]:
    """The mention's spelling: one word or more, an acronym, digits, a capital inside a word, a lower-case word."""
    text = " ".join(words)
    return [
        _flag(len(words) == 1),
        math.log1p(len(words)),
        _flag(len(text) <= 3),
        _flag(len(words) == 1 and text.isupper() and len(text) > 1),
        _flag(any(c.isdigit() for c in text)),
        _flag(any(a.islower() and b.isupper() for w in words for a, b in pairwise(w))),
        _flag(any(w[:1].islower() for w in words[1:] if w.isalpha() and len(w) > 3)),
    ]


def _lexicon(keys: Sequence[str]) -> list[float]:
    """The project's general word lists: a first name, the last word of an organisation's, place's, event's name."""
    first = bool(keys) and keys[0] in first_names() and len(keys) > 1
    last = keys[-1] if keys else ""
    return [
        _flag(first),
        _flag(last in ORG_DESIGNATORS),
        _flag(last in PLACE_DESIGNATORS),
        _flag(last in EVENT_DESIGNATORS),
    ]


def _neighbours(span: Span) -> list[float]:
    """What stands before and after the mention: a determiner, a title, the sentence's start; a number or model
    code ("RAV4 Prime 2"), another capitalised word, a possessive."""
    doc = span.doc
    before = doc[span.start - 1] if span.start > 0 else None
    after = doc[span.end] if span.end < len(doc) else None
    return [
        _flag(before is not None and before.pos_ == "DET"),
        _flag(before is not None and before.lower_.rstrip(".") in TITLES and before.lower_ != "the"),
        _flag(span[0].is_sent_start or before is None or (before.is_punct and before.text in {":", "|", "-", "–"})),
        _flag(after is not None and any(c.isdigit() for c in after.text)),
        _flag(after is not None and after.text[:1].isupper() and after.pos_ == "PROPN"),
        _flag((after is not None and after.lower_ in {"'s", "’s", "'", "’"}) or span[-1].lower_ in {"'s", "’s"}),
    ]


def _role(span: Span) -> list[float]:
    """The mention's place in the parse: modifying a noun ("the Stadia controller"), subject, object, possessor,
    conjunct, or the subject of a verb it acts or speaks through."""
    root = span.root
    modifies = root.dep_ in {"compound", "amod", "nmod"} and root.head.pos_ in {"NOUN", "PROPN"}
    modifies = modifies and root.head.i >= span.end
    return [
        _flag(modifies),
        _flag(root.dep_ in SUBJECT_ROLES),
        _flag(root.dep_ in OBJECT_ROLES),
        _flag(root.dep_ == "poss"),
        _flag(root.dep_ in {"conj", "appos"}),
        _flag(root.dep_ in SUBJECT_ROLES and root.head.pos_ in {"VERB", "AUX"}),
    ]


def _model_agrees(span: Span, kind: str) -> bool:
    """spaCy's own label of the span's tokens says the same type (a rule's mention may overrule it)."""
    labels = {t.ent_type_ for t in span if t.ent_type_}
    return labels == {kind}


def _in_chunk(span: Span, keys: Sequence[str]) -> list[float]:
    """A one-word name whose lower-case form stands in the same chunk is likely a common word ("Meth … meth"); a
    name repeated in the chunk is likely one."""
    doc = span.doc
    word = keys[0] if len(keys) == 1 else ""
    outside = [t for t in doc if t.i < span.start or t.i >= span.end]
    lower_form = bool(word) and any(t.text == word for t in outside)
    joined = " ".join(keys)
    repeats = sum(1 for t in outside if t.lower_ == joined) if word else doc.text.lower().count(joined) - 1
    return [_flag(lower_form), math.log1p(max(repeats, 0))]


def mention_features(doc: Doc, mention: Candidate) -> list[float]:
    """The model's inputs for one mention, in FEATURES order: its signals on its type's side, zeros on the other."""
    values = _signals(doc, mention)
    zeros = [0.0] * len(values)
    return values + zeros if mention.type == "PERSON" else zeros + values


def _signals(doc: Doc, mention: Candidate) -> list[float]:
    """The mention's SIGNALS, in order."""
    span = doc[mention.token_start : mention.token_end]
    words = mention.name.split() or [span.text]
    keys = tokens_of(mention.name)
    return [
        1.0,
        *(_flag(mention.source == s) for s in SOURCES),
        _flag(mention.vote > 1),
        *_shape(words),
        *_lexicon(keys),
        *_neighbours(span),
        *_role(span),
        _flag(_model_agrees(span, mention.type)),
        *_in_chunk(span, keys),
        *prose_features(sentence_shape(span.sent)),
    ]


@dataclass(frozen=True)
class NameModel:
    scorer: LogisticModel  # the probability that the mention is a real name of its type
    thresholds: dict[str, float]  # type → the score below which a mention of it is not kept

    @property
    def weights(self) -> tuple[float, ...]:
        return self.scorer.weights

    def score(self, features: Sequence[float]) -> float:
        return self.scorer.score(features)


@cache
def model() -> NameModel:
    scorer, data = load(MODEL_FILE, FEATURES, "bench/fit_names.py")
    return NameModel(scorer, dict(data["thresholds"]))


def doubtful(doc: Doc, mention: Candidate) -> float | None:
    """The mention's score when it is a PERSON or ORG the model doubts (below its type's threshold), else None."""
    if mention.type not in CHECKED_TYPES or mention.source == "known":
        return None  # a known name is its entity's, typed by the vote of all its mentions: never doubted alone
    found = model()
    score = found.score(mention_features(doc, mention))
    return score if score < found.thresholds[mention.type] else None
