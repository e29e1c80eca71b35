"""Scoring predicted entity mentions against the gold set.

Spans are compared after the same trimming on both sides: surrounding quotes and punctuation, a trailing
possessive and leading titles or "the" off (the project's `clean_name` rules), so "the White House" and
"President Trump's" match gold "White House" and "Trump"; everything else must agree to the character.

- mentions, by type: a prediction is right when its span and type equal a gold mention's (exact); the lenient
  figure accepts any overlap with the same type (one-to-one). "all" adds every type up; "any type" ignores
  types (span only).
- type accuracy: of the gold mentions whose span was found (any type), the share predicted with the gold type.
- linking accuracy: of the gold mentions whose span was found, the share on the right entity. For each gold
  canonical name of a document, its target is the predicted entity most of its found mentions landed on; a
  mention is right when it landed on its target, the target's name or one of its aliases is the canonical name
  (compared with `name_key`), and no found mention of another canonical name landed on the same entity. The
  short-form figure is the same over mentions whose text is not the canonical name ("Leto" → "Jared Leto").

Predicted mentions that are not names (pronouns and lower-case descriptions resolved by coreference, "she",
"the company") are counted apart and not scored: the gold set annotates names only."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel

from newskg.evaluation.entities.gold import GoldDocument, GoldMention
from newskg.extract.entities.names import TITLES, name_key

EDGE_CHARACTERS = " \t\n\"'“”‘’,.;:()[]"
PRONOUNS = frozenset(
    (
        "i",
        "me",
        "my",
        "mine",
        "myself",
        "we",
        "us",
        "our",
        "ours",
        "he",
        "him",
        "his",
        "himself",
        "she",
        "her",
        "hers",
        "herself",
        "it",
        "its",
        "itself",
        "they",
        "them",
        "their",
        "theirs",
        "themselves",
        "you",
        "your",
        "yours",
    )
)


@dataclass(frozen=True)
class Predicted:
    start: int
    end: int
    text: str
    type: str
    entity: str  # predicted entity id


@dataclass
class DocumentPrediction:
    doc_id: str
    mentions: list[Predicted]
    # entity id → the name keys it answers to (its name and aliases)
    names: dict[str, set[str]] = field(default_factory=dict[str, set[str]])


def core_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without surrounding punctuation, a trailing possessive or leading titles / "the"."""
    while True:
        before = (start, end)
        while start < end and text[start] in EDGE_CHARACTERS:
            start += 1
        while end > start and text[end - 1] in EDGE_CHARACTERS:
            end -= 1
        if text[start:end].lower().endswith(("'s", "’s")) and end - start > 2:
            end -= 2
        first, _, rest = text[start:end].partition(" ")
        if rest.strip() and first.lower().rstrip(".") in TITLES:
            start += len(first) + 1
        if (start, end) == before:
            return start, end


def is_name(text: str) -> bool:
    """A name has a capital letter and is not a pronoun ("She"); an acronym is a name even when it spells one
    ("US", "IT")."""
    word = text.strip()
    acronym = len(word) > 1 and word.isupper()
    return any(c.isupper() for c in word) and (acronym or word.lower() not in PRONOUNS)


class PRF(BaseModel):
    gold: int
    predicted: int
    correct: int
    precision: float | None
    recall: float | None
    f1: float | None


def prf(gold: int, predicted: int, correct: int) -> PRF:
    precision = correct / predicted if predicted else None
    recall = correct / gold if gold else None
    f1 = (
        2 * precision * recall / (precision + recall)
        if precision is not None and recall is not None and precision + recall
        else (0.0 if precision is not None and recall is not None else None)
    )
    return PRF(gold=gold, predicted=predicted, correct=correct, precision=precision, recall=recall, f1=f1)


class Accuracy(BaseModel):
    total: int
    correct: int
    value: float | None


def accuracy(correct: int, total: int) -> Accuracy:
    return Accuracy(total=total, correct=correct, value=correct / total if total else None)


class Scores(BaseModel):
    exact: dict[str, PRF]  # type | "all" | "any type" → P/R/F1
    lenient: dict[str, PRF]
    type_accuracy: Accuracy
    linking_accuracy: Accuracy
    short_form_linking: Accuracy
    not_names: int  # predicted coreference mentions (pronouns, descriptions): not scored


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    type: str


def _spans(text: str, items: Iterable[GoldMention | Predicted]) -> list[_Span]:
    return [_Span(*core_span(text, m.start, m.end), m.type) for m in items]


def _exact_counts(gold: list[_Span], pred: list[_Span], typed: bool) -> int:
    def key(s: _Span) -> tuple[int, int, str]:
        return (s.start, s.end, s.type if typed else "")

    return sum((Counter(map(key, gold)) & Counter(map(key, pred))).values())


def _lenient_counts(gold: list[_Span], pred: list[_Span]) -> int:
    used: set[int] = set()
    correct = 0
    for g in sorted(gold, key=lambda s: (s.start, s.end)):
        for i, p in enumerate(pred):
            if i not in used and p.type == g.type and p.start < g.end and g.start < p.end:
                used.add(i)
                correct += 1
                break
    return correct


@dataclass
class _Tally:
    gold: Counter[str] = field(default_factory=Counter[str])
    predicted: Counter[str] = field(default_factory=Counter[str])
    exact: Counter[str] = field(default_factory=Counter[str])
    lenient: Counter[str] = field(default_factory=Counter[str])
    found: int = 0
    typed_right: int = 0
    linked: int = 0
    short_forms: int = 0
    short_linked: int = 0
    not_names: int = 0


def _link_right(doc: GoldDocument, prediction: DocumentPrediction) -> dict[int, bool]:
    """Gold mention index → linked right, for the gold mentions whose span was found."""
    text = doc.text
    by_span: dict[tuple[int, int], Predicted] = {}
    for p in prediction.mentions:
        by_span.setdefault(core_span(text, p.start, p.end), p)
    landed: dict[int, str] = {}
    for i, g in enumerate(doc.mentions):
        p = by_span.get(core_span(text, g.start, g.end))
        if p is not None:
            landed[i] = p.entity
    votes: dict[str, Counter[str]] = defaultdict(Counter)
    for i, entity in landed.items():
        votes[name_key(doc.mentions[i].canonical)][entity] += 1
    target = {canonical: counts.most_common(1)[0][0] for canonical, counts in votes.items()}
    canonicals_on: dict[str, set[str]] = defaultdict(set)
    for i, entity in landed.items():
        canonicals_on[entity].add(name_key(doc.mentions[i].canonical))
    right: dict[int, bool] = {}
    for i, entity in landed.items():
        canonical = name_key(doc.mentions[i].canonical)
        right[i] = (
            entity == target[canonical]
            and canonical in prediction.names.get(entity, set())
            and canonicals_on[entity] == {canonical}
        )
    return right


def _tally_document(doc: GoldDocument, prediction: DocumentPrediction, tally: _Tally) -> None:
    names = [p for p in prediction.mentions if is_name(p.text)]
    tally.not_names += len(prediction.mentions) - len(names)
    gold, pred = _spans(doc.text, doc.mentions), _spans(doc.text, names)
    for kind in {s.type for s in gold} | {s.type for s in pred}:
        g = [s for s in gold if s.type == kind]
        p = [s for s in pred if s.type == kind]
        tally.gold[kind] += len(g)
        tally.predicted[kind] += len(p)
        tally.exact[kind] += _exact_counts(g, p, typed=True)
        tally.lenient[kind] += _lenient_counts(g, p)
    tally.exact["any type"] += _exact_counts(gold, pred, typed=False)
    predicted_type = {(s.start, s.end): s.type for s in reversed(pred)}
    for s in gold:
        if (s.start, s.end) in predicted_type:
            tally.found += 1
            tally.typed_right += predicted_type[(s.start, s.end)] == s.type
    for i, right in _link_right(doc, DocumentPrediction(doc.id, names, prediction.names)).items():
        tally.linked += right
        if name_key(doc.mentions[i].text) != name_key(doc.mentions[i].canonical):
            tally.short_forms += 1
            tally.short_linked += right


def score(gold: list[GoldDocument], predictions: dict[str, DocumentPrediction]) -> Scores:
    tally = _Tally()
    for doc in gold:
        _tally_document(doc, predictions.get(doc.id, DocumentPrediction(doc.id, [])), tally)
    kinds = sorted(set(tally.gold) | set(tally.predicted))
    all_gold, all_pred = sum(tally.gold.values()), sum(tally.predicted.values())
    exact = {k: prf(tally.gold[k], tally.predicted[k], tally.exact[k]) for k in kinds}
    exact["all"] = prf(all_gold, all_pred, sum(tally.exact[k] for k in kinds))
    exact["any type"] = prf(all_gold, all_pred, tally.exact["any type"])
    lenient = {k: prf(tally.gold[k], tally.predicted[k], tally.lenient[k]) for k in kinds}
    lenient["all"] = prf(all_gold, all_pred, sum(tally.lenient[k] for k in kinds))
    return Scores(
        exact=exact,
        lenient=lenient,
        type_accuracy=accuracy(tally.typed_right, tally.found),
        linking_accuracy=accuracy(tally.linked, tally.found),
        short_form_linking=accuracy(tally.short_linked, tally.short_forms),
        not_names=tally.not_names,
    )
