"""Scores for replayed answers: the LLM judges (zero- and few-shot, 0–2 per attribute, one call each) when an LLM
is configured, else the offline proxies. A run uses one family only, and every table names it: proxy figures are
reported under `proxy_*` attributes and are never averaged with, or shown as, judge scores.

The judges and proxies live in `evaluation.neon.judges` and `evaluation.neon.proxies`; this module adapts their
results to one record per attribute ({score, rationale}) for the report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypedDict

from newskg.core.llm.client import LLMClient
from newskg.evaluation.neon.judges import Judge
from newskg.evaluation.neon.proxies import offline_proxies
from newskg.qa.evidence import Evidence

JUDGE_ATTRIBUTES = ("helpfulness", "relevance", "faithfulness")
PROXY_ATTRIBUTES = (
    "proxy_date_precision",
    "proxy_evidence_entity_coverage",
    "proxy_answer_entity_coverage",
    "proxy_supported_token_share",
)
PROXY_RADIUS = 1  # days either side of the query day that count as "on the day" for date precision


class AttributeScore(TypedDict, total=False):
    """One attribute's score as report.json holds it. Both scorers write `score` and `rationale`, the judges also
    `parsed`; not total because the report reads every key with `.get` (a missing attribute reads as `{}`)."""

    score: float | None  # judges 0, 1 or 2; proxies 0-1; None: no score (unparsed, or nothing to measure)
    rationale: str
    parsed: bool  # judges only: False when the verdict could not be read


class JudgementRecord(TypedDict):
    """One scorer's judgement of one answer in a replay record: its attributes, and the scorer's raw output."""

    attributes: dict[str, AttributeScore]
    raw: dict[str, Any]  # the judgement's or the proxy figures' JSON form


@dataclass(frozen=True)
class Scored:
    """One answer's scores: attribute → {score (None: no score, e.g. unparsed or no evidence), rationale}."""

    attributes: dict[str, AttributeScore]
    raw: dict[str, Any] = field(default_factory=dict[str, Any])  # JSON-ready: the judgement or the proxy figures


class Scorer(Protocol):
    name: str  # judge-zero-shot | judge-few-shot | proxies
    family: str  # judge | proxy
    attributes: tuple[str, ...]
    scale_max: float

    def score(self, query: str, day: int, answer: str, evidence: Sequence[Evidence], subject: str) -> Scored: ...


class JudgeScorer:
    family: str = "judge"
    attributes: tuple[str, ...] = JUDGE_ATTRIBUTES
    scale_max: float = 2.0

    def __init__(self, llm: LLMClient, few_shot: bool):
        self.judge = Judge(llm, few_shot=few_shot)
        self.name: str = "judge-few-shot" if few_shot else "judge-zero-shot"

    def score(self, query: str, day: int, answer: str, evidence: Sequence[Evidence], subject: str) -> Scored:
        judgement = self.judge.judge(query, day, answer, evidence)
        return Scored(
            {
                a.attribute: {"score": a.score, "rationale": a.rationale, "parsed": a.parsed}
                for a in judgement.attributes
            },
            judgement.as_dict(),
        )


class ProxyScorer:
    name: str = "proxies"
    family: str = "proxy"
    attributes: tuple[str, ...] = PROXY_ATTRIBUTES
    scale_max: float = 1.0

    def score(self, query: str, day: int, answer: str, evidence: Sequence[Evidence], subject: str) -> Scored:
        figures = _proxy_figures(query, day, answer, evidence, subject)
        n = len(evidence)
        return Scored(
            {
                attribute: {"score": figures.get(attribute), "rationale": _proxy_rationale(attribute, figures, n)}
                for attribute in PROXY_ATTRIBUTES
            },
            figures,
        )


def scorers(llm: LLMClient | None) -> list[Scorer]:
    """Judges (zero-shot, then few-shot: NEON Tables 4 and 5) with an LLM, else the proxies; never both."""
    if llm is None:
        return [ProxyScorer()]
    return [JudgeScorer(llm, few_shot=False), JudgeScorer(llm, few_shot=True)]


def _proxy_figures(query: str, day: int, answer: str, evidence: Sequence[Evidence], subject: str) -> dict[str, Any]:
    return offline_proxies(query, day, answer, evidence, subject=subject, radius=PROXY_RADIUS).as_dict()


def _proxy_rationale(attribute: str, figures: dict[str, Any], n_evidence: int) -> str:
    value = figures.get(attribute)
    if value is None:
        return "no evidence (or nothing to measure): no score"
    share = f"{value:.2f}"
    if attribute == "proxy_date_precision":
        return f"{share} of {n_evidence} evidence items dated within ±{PROXY_RADIUS} day(s) of the query day"
    if attribute == "proxy_evidence_entity_coverage":
        return f"{share} of {n_evidence} evidence items name an entity besides the subject"
    if attribute == "proxy_answer_entity_coverage":
        return f"{share} of the answer's sentences name an entity besides the subject"
    return f"{share} of the answer's content tokens occur in the evidence"
