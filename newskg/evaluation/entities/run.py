"""Runs the extract stage's entity code over the gold documents, once per configuration: the plain spaCy model,
then the Linker with no rule, then each rule of `EntityRules` switched on in turn (cumulatively, in
`EntityRules.names()` order, so a rule added there is measured without touching this file), and last, when some
rule is off by default, the default rules (what the extract stage runs).

Each document is one article; each paragraph (non-empty line) of it is one chunk, parsed by the stage's spaCy
pipeline (extract/nlp.py) and linked by `Linker(AliasIndex(), rules=...)` in order. Paragraphs rather than the
stage's overlapping 5-sentence windows: every character is predicted exactly once, so gold offsets map back
without merging two predictions of the same sentence, and a paragraph is about the size of a stage chunk.
The Linker keeps its article memory across the chunks of a document as in the stage, and one alias index
serves the whole run, documents in gold order one ingestion instant apart (as a stream would)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from spacy.tokens import Doc

from newskg.evaluation.entities.gold import GoldDocument
from newskg.evaluation.entities.scoring import DocumentPrediction, Predicted, Scores, score
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker, first_seen
from newskg.extract.entities.names import clean_name, name_key
from newskg.extract.entities.rules import EntityRules
from newskg.extract.entities.types import LABEL_TO_TYPE
from newskg.extract.nlp import pipeline

BASELINE = "spaCy model alone"
NO_RULES = "linker, no rules"
DEFAULTS = "= defaults (extract stage)"
DAY = 20240101  # the gold texts carry no reliable date: one day for all, as-of order from the ingestion instant


@dataclass(frozen=True)
class Paragraph:
    offset: int  # where the paragraph starts in the document text
    text: str


@dataclass(frozen=True)
class Configuration:
    name: str
    rules: EntityRules | None  # None: the plain model, no linker


@dataclass
class ParsedDocument:
    gold: GoldDocument
    paragraphs: list[Paragraph]
    docs: list[Doc]


def configurations() -> list[Configuration]:
    out = [Configuration(BASELINE, None), Configuration(NO_RULES, EntityRules.none())]
    enabled: list[str] = []
    for rule in EntityRules.names():
        enabled.append(rule)
        out.append(Configuration(f"+ {rule}", EntityRules.none().with_rules(*enabled)))
    if EntityRules() != out[-1].rules:  # a rule measured but off by default: the stage's own figures last
        out.append(Configuration(DEFAULTS, EntityRules()))
    return out


def paragraphs(text: str) -> list[Paragraph]:
    out: list[Paragraph] = []
    offset = 0
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped:
            out.append(Paragraph(offset + line.index(stripped), stripped))
        offset += len(line) + 1
    return out


def parse(gold: list[GoldDocument]) -> list[ParsedDocument]:
    """One spaCy pass over every paragraph (the configurations reuse copies of the parses)."""
    split = [paragraphs(doc.text) for doc in gold]
    docs = iter(pipeline().pipe([p.text for ps in split for p in ps], batch_size=32))
    return [ParsedDocument(doc, ps, [next(docs) for _ in ps]) for doc, ps in zip(gold, split, strict=True)]


def baseline(parsed: list[ParsedDocument]) -> dict[str, DocumentPrediction]:
    """The model's entities of the kept types; an entity per distinct name (no linking beyond the exact name)."""
    out: dict[str, DocumentPrediction] = {}
    for doc in parsed:
        mentions: list[Predicted] = []
        names: dict[str, set[str]] = {}
        for paragraph, parse_ in zip(doc.paragraphs, doc.docs, strict=True):
            for ent in parse_.ents:
                kind = LABEL_TO_TYPE.get(ent.label_)
                key = name_key(clean_name(ent.text))
                if kind and key:
                    start = paragraph.offset + ent.start_char
                    mentions.append(Predicted(start, paragraph.offset + ent.end_char, ent.text, kind, key))
                    names[key] = {key}
        out[doc.gold.id] = DocumentPrediction(doc.gold.id, mentions, names)
    return out


def linked(parsed: list[ParsedDocument], rules: EntityRules) -> dict[str, DocumentPrediction]:
    linker = Linker(AliasIndex(), rules=rules)
    out: dict[str, DocumentPrediction] = {}
    for number, doc in enumerate(parsed, start=1):
        as_of = first_seen(DAY, number * 1000)  # the chunks of one article share its ingestion instant
        mentions: list[Predicted] = []
        for paragraph, parse_ in zip(doc.paragraphs, doc.docs, strict=True):
            for m in linker.link(parse_.copy(), doc.gold.id, as_of):
                start, end = paragraph.offset + m.start, paragraph.offset + m.end
                mentions.append(Predicted(start, end, m.text, m.type, m.entity_id))
        out[doc.gold.id] = DocumentPrediction(doc.gold.id, mentions)
    for prediction in out.values():  # names as the index knows them at the end of the run
        for m in prediction.mentions:
            known = linker.index.entities[m.entity]
            prediction.names[m.entity] = {name_key(known.name)} | {name_key(a) for a in known.aliases}
    return out


@dataclass
class ConfigurationResult:
    configuration: Configuration
    scores: Scores
    predictions: dict[str, DocumentPrediction]


def evaluate(
    gold: list[GoldDocument], on_done: Callable[[str], None] = lambda _: None
) -> Iterator[ConfigurationResult]:
    parsed = parse(gold)
    for configuration in configurations():
        predictions = baseline(parsed) if configuration.rules is None else linked(parsed, configuration.rules)
        yield ConfigurationResult(configuration, score(gold, predictions), predictions)
        on_done(configuration.name)
