"""How close a text is to a query, for ranking evidence and picking answer sentences: cosine of sentence
embeddings when an embedder is at hand (the mirror's), else a cheap lexical score (word overlap).

The query has several forms (NEON §2.2 embeds the original q and the reformulated q'; we add the query's
topic, see QueryTexts.forms). A text's score is the *mean* of its cosine to each: for unit vectors,
cos(x, q) + cos(x, q') = x · (q + q'), so the mean ranks exactly as one search with the normalised sum vector
(the score shown is that cosine, the mean up to a constant factor) — one ANN query per search instead of one
per form, and a text must agree with the user's words and with the dated, disambiguated form rather than with
either alone (the max would let the date phrase or the entity name alone carry a text that says nothing of
what the user asked). The forms are embedded without NEON's "(Date: …)" prefix (QueryTexts.embedded): the day
is the retrieval's filter, not a word any stored text carries."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from newskg.graph.mirror.embed import Embedder

Vector = npt.NDArray[np.float32]
WORD = re.compile(r"[\w'’]+")
DATE_PREFIX = re.compile(r"^\s*\(Date:[^)]*\)\s*", re.IGNORECASE)  # NEON's reformulation's first words
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"“'A-Z0-9])")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "for",
        "from",
        "has",
        "had",
        "have",
        "he",
        "her",
        "his",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "she",
        "that",
        "the",
        "their",
        "them",
        "they",
        "this",
        "to",
        "was",
        "were",
        "which",
        "who",
        "will",
        "with",
        "date",
    ]
)


@dataclass(frozen=True)
class QueryTexts:
    """The user's query as typed, its reformulation ("(Date: August 31, 2023) Doja Cat layoffs") and its topic:
    the words beyond the entity and the date ("layoffs"), empty for a bare entity query."""

    original: str
    reformulated: str
    topic: str = ""

    @classmethod
    def of(cls, text: str | QueryTexts) -> QueryTexts:
        return text if isinstance(text, QueryTexts) else cls(text, text)

    @property
    def name_alone(self) -> bool:
        """No topic words: the query is an entity's name (and its day), which every fact of the entity holds, so
        similarity to it cannot rank them (retrieval ranks them by salience, the answer keeps that order). A plain
        text made a QueryTexts by `of` counts as one."""
        return not self.topic.strip()

    @property
    def forms(self) -> list[str]:
        """The distinct forms a text is compared with. The topic is one of them because the entity's name, in
        every other form, is shared by all the entity's items and cannot rank them: with MiniLM, "Doja Cat will
        sell tickets next week" is closer to "Doja Cat layoffs" than the day's layoffs story is, until
        "layoffs" has a vote of its own."""
        return list(dict.fromkeys(f for f in (self.original, self.reformulated, self.topic) if f.strip()))

    @property
    def embedded(self) -> list[str]:
        """The forms a query vector is made of: each without its "(Date: …)" prefix, one per wording whatever its
        case. The day is applied exactly, as the as-of filter and the rings around it, and no stored text carries
        it, so embedding it only moved the vector; without it a name asked on any day is one text, which the API's
        embedding cache (graph/mirror/embed_cache.py) embeds once (issue 30)."""
        kept: dict[str, str] = {}
        for form in self.forms:
            text = DATE_PREFIX.sub("", form).strip()
            if text:
                kept.setdefault(text.casefold(), text)
        return list(kept.values()) or self.forms


@dataclass(frozen=True)
class Similarity:
    """A text's cosine to a query's vector (query_vector) under one embedding model, as retrieval scored it from the
    mirror's vector of the text (embedded once, when the text was written): the answer's sentence choice reuses it
    for a text that is one sentence instead of embedding that sentence again (qa/answer.best_sentences)."""

    query: QueryTexts
    model: str  # the embedder's name: a cosine under another model is not comparable
    cosine: float


def words(text: str) -> list[str]:
    """Lower-cased content words (stopwords off)."""
    return [w for w in (m.lower() for m in WORD.findall(text)) if w not in STOPWORDS]


def sentences(text: str) -> list[str]:
    """A cheap sentence split (a chunk's sentences were joined with spaces; an interaction is one sentence)."""
    return [s.strip() for s in SENTENCE_END.split(text) if s.strip()]


def lexical(query: QueryTexts, texts: Sequence[str]) -> list[float]:
    """Share of the query's distinct content words a text contains, damped by the text's length so a long
    text does not win by size alone; the mean over the two query forms."""
    forms = [set(words(form)) for form in query.forms]
    scores: list[float] = []
    for text in texts:
        have = set(words(text))
        damp = 1.0 / (1.0 + math.log1p(len(have)) / 10)
        scores.append(sum(len(f & have) / len(f) for f in forms if f) / len(forms) * damp)
    return scores


Rows = Sequence[Sequence[float]] | Sequence[Vector]  # vectors as float lists, or as the float32 arrays kept of them


def unit(vectors: Rows) -> npt.NDArray[np.float32]:
    matrix = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1.0, norms)).astype(np.float32)


def query_vector(embedder: Embedder, query: QueryTexts) -> Vector:
    """The normalised mean of the embedded forms' unit vectors: its cosine to a text ranks as the mean cosine."""
    mean = unit(embedder.embed(query.embedded)).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm if norm else mean).astype(np.float32)


def cosine(vector: Vector, vectors: Rows) -> list[float]:
    if not vectors:
        return []
    return [float(s) for s in unit(vectors) @ vector]
