"""Offline PROXIES for NEON's judge attributes, for runs without an LLM. They are not judgements: they measure
something checkable about the evidence and the answer, are reported under `proxy_*` names, and are never
averaged with or substituted for judge scores.

Same structural inputs as the judges (query, yyyymmdd day, answer, evidence with `text`, `event_day`, `kind`):

- `proxy_date_precision`: the share of evidence items whose `event_day` lies within ±`radius` calendar days of
  the query day (None without evidence). A proxy of relevance to the day.
- `proxy_evidence_entity_coverage`: the share of evidence items whose text names at least one entity other
  than the subject; `proxy_answer_entity_coverage`: the same share over the answer's sentences;
  `proxy_answer_other_entities`: how many distinct other entities the answer names. Entities are the named
  mentions found by the project's spaCy NER (`extract.nlp`, the labels extraction keeps: `LABEL_TO_TYPE`); a
  mention is the subject when its `name_key` contains the subject's key as whole words or the other way round
  ("Cat" and "Doja Cat's" are Doja Cat). The subject is the query entity's name (default: the query text).
  A proxy of helpfulness ("mentions entities beyond the primary one").
- `proxy_supported_token_share`: the share of the answer's content tokens (with repeats) that occur among the
  content tokens of the evidence, of the evidence days and of the query day written in words. Tokens come from
  spaCy's rule-based English tokenizer (`spacy.blank("en")`), lower-cased; content tokens are those with a
  letter or digit that are not in spaCy's English stop-word list. A proxy of faithfulness.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import cache, lru_cache
from typing import Any

import spacy
from spacy.lang.en.stop_words import STOP_WORDS

from newskg.core.timeaxes import day_from_key, day_words
from newskg.evaluation.neon.judges.inputs import EvidenceLike
from newskg.extract.entities.names import name_key
from newskg.extract.entities.types import LABEL_TO_TYPE
from newskg.extract.nlp import pipeline

EntityFinder = Callable[[str], Sequence[str]]  # text -> entity mentions, as written


@dataclass(frozen=True)
class ProxyScores:
    radius: int
    n_evidence: int
    n_answer_tokens: int  # content tokens of the answer
    date_precision: float | None
    evidence_entity_coverage: float | None
    answer_entity_coverage: float | None
    answer_other_entities: int
    supported_token_share: float | None

    def as_dict(self) -> dict[str, Any]:
        """Every figure under a `proxy_` name, so a report can never mistake one for a judge score."""
        return {f"proxy_{key}": value for key, value in asdict(self).items()}


def offline_proxies(
    query: str,
    day: int,
    answer: str,
    evidence: Sequence[EvidenceLike],
    *,
    subject: str | None = None,
    radius: int = 1,
    entities: EntityFinder | None = None,
) -> ProxyScores:
    find = entities or spacy_entities
    subject_name = subject if subject is not None else query
    sentences = answer_sentences(answer)
    answer_tokens = content_tokens(answer)
    return ProxyScores(
        radius=radius,
        n_evidence=len(evidence),
        n_answer_tokens=len(answer_tokens),
        date_precision=date_precision(day, evidence, radius),
        evidence_entity_coverage=_share([_names_other(find(e.text), subject_name) for e in evidence]),
        answer_entity_coverage=_share([_names_other(find(s), subject_name) for s in sentences]),
        answer_other_entities=len(other_entities(find(answer), subject_name)),
        supported_token_share=supported_token_share(day, answer_tokens, evidence),
    )


def date_precision(day: int, evidence: Sequence[EvidenceLike], radius: int) -> float | None:
    query_date = day_from_key(day)
    return _share([abs((day_from_key(e.event_day) - query_date).days) <= radius for e in evidence])


def other_entities(mentions: Sequence[str], subject: str) -> set[str]:
    """Distinct `name_key`s of the mentions that are not the subject."""
    keys = {name_key(m) for m in mentions}
    return {key for key in keys if key and not is_subject(key, name_key(subject))}


def is_subject(key: str, subject_key: str) -> bool:
    padded_key, padded_subject = f" {key} ", f" {subject_key} "
    return padded_subject in padded_key or padded_key in padded_subject


def supported_token_share(day: int, answer_tokens: list[str], evidence: Sequence[EvidenceLike]) -> float | None:
    texts = [day_words(day), *(e.text for e in evidence), *(day_words(e.event_day) for e in evidence)]
    vocabulary = {token for text in texts for token in content_tokens(text)}
    return _share([token in vocabulary for token in answer_tokens])


_WORD = re.compile(r"[^\W_]", re.UNICODE)  # a letter or a digit


def content_tokens(text: str) -> list[str]:
    return [t.lower_ for t in _tokenizer()(text) if _WORD.search(t.text) and t.lower_ not in STOP_WORDS]


def answer_sentences(answer: str) -> list[str]:
    return [s.text.strip() for s in _sentencizer()(answer).sents if s.text.strip()]


@lru_cache(maxsize=4096)  # the same evidence text recurs across methods, strategies and k
def spacy_entities(text: str) -> tuple[str, ...]:
    return tuple(ent.text for ent in pipeline()(text).ents if ent.label_ in LABEL_TO_TYPE)


def _names_other(mentions: Sequence[str], subject: str) -> bool:
    return bool(other_entities(mentions, subject))


def _share(flags: list[bool]) -> float | None:
    return sum(flags) / len(flags) if flags else None


@cache
def _tokenizer() -> spacy.language.Language:
    return spacy.blank("en")


@cache
def _sentencizer() -> spacy.language.Language:
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp
