"""The LLM judges (NEON §3-4): one call per attribute through the project's LLM client (cache, retries, budget,
token and cost ledger), a typed record per judgement, and the per-attribute aggregate.

A judgement whose answer cannot be read as a 0-2 rating, even after the client's one corrective retry, is
`parsed=False` with `score=None`: it is counted as unparsed and never enters a mean."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from types import ModuleType
from typing import Any

from newskg.core.llm.client import LLMClient
from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neon.judges.inputs import ATTRIBUTES, Attribute, EvidenceLike, JudgeCase
from newskg.evaluation.neon.judges.prompts import faithfulness, helpfulness, relevance
from newskg.evaluation.neon.judges.prompts.base import Verdict

PROMPTS: dict[Attribute, ModuleType] = {
    "helpfulness": helpfulness,
    "relevance": relevance,
    "faithfulness": faithfulness,
}
UNPARSED = "unparsed"  # the client's ledger counter name for judgements that gave no score


@dataclass(frozen=True)
class AttributeJudgement:
    attribute: Attribute
    score: int | None  # 0, 1 or 2; None when unparsed
    rationale: str
    parsed: bool
    attempts: int  # LLM calls made: 0 = answered from the cache, 1, or 2 after the corrective retry
    cache_hit: bool
    prompt_tokens: int
    completion_tokens: int
    prompt: str  # prompt name, as in the usage ledger (`newskg extract stats`)


@dataclass(frozen=True)
class Judgement:
    query: str
    day: int
    few_shot: bool
    attributes: tuple[AttributeJudgement, ...]

    def get(self, attribute: Attribute) -> AttributeJudgement | None:
        return next((a for a in self.attributes if a.attribute == attribute), None)

    def score(self, attribute: Attribute) -> int | None:
        found = self.get(attribute)
        return found.score if found else None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class AttributeSummary:
    attribute: Attribute
    mean: float | None  # over parsed judgements only; None when there is none
    parsed: int
    unparsed: int


class Judge:
    """`Judge(llm, few_shot).judge(query, day, answer, evidence) -> Judgement`: three separate calls, one per
    attribute. Per-judgement calls and tokens are the change in the client's session usage around the call:
    exact when no other thread uses the same client at that moment (calls through this judge are serialised);
    the persistent ledger is exact regardless. `BudgetExceeded` from the client propagates (stop cleanly)."""

    def __init__(self, llm: LLMClient, few_shot: bool = False, attributes: Sequence[Attribute] = ATTRIBUTES):
        self.llm = llm
        self.few_shot = few_shot
        self.attributes = tuple(attributes)
        self._lock = threading.Lock()

    def judge(self, query: str, day: int, answer: str, evidence: Sequence[EvidenceLike]) -> Judgement:
        case = JudgeCase.of(query, day, answer, evidence)
        graded = tuple(self._grade(attribute, case) for attribute in self.attributes)
        return Judgement(query, day, self.few_shot, graded)

    def prompt(self, attribute: Attribute, case: JudgeCase) -> Prompt[Verdict]:
        return PROMPTS[attribute].build(case, self.few_shot)

    def _grade(self, attribute: Attribute, case: JudgeCase) -> AttributeJudgement:
        prompt = self.prompt(attribute, case)
        with self._lock:
            before = _usage(self.llm)
            verdict = self.llm.complete(prompt, Verdict)
            after = _usage(self.llm)
        calls, cached, prompt_tokens, completion_tokens = (a - b for a, b in zip(after, before, strict=True))
        if verdict is None:
            self.llm.count(prompt.name, UNPARSED)
        return AttributeJudgement(
            attribute=attribute,
            score=verdict.rating if verdict else None,
            rationale=verdict.reason if verdict else "",
            parsed=verdict is not None,
            attempts=calls,
            cache_hit=cached > 0,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            prompt=prompt.name,
        )


def _usage(llm: LLMClient) -> tuple[int, int, int, int]:
    u = llm.usage
    return u.calls, u.cached, u.prompt_tokens, u.completion_tokens


def aggregate(
    judgements: Iterable[Judgement], attributes: Sequence[Attribute] = ATTRIBUTES
) -> dict[str, AttributeSummary]:
    """Per attribute: the mean score over parsed judgements and how many were unparsed (never counted as 0)."""
    scores: dict[Attribute, list[int]] = {a: [] for a in attributes}
    unparsed: dict[Attribute, int] = dict.fromkeys(attributes, 0)
    for judgement in judgements:
        for graded in judgement.attributes:
            if graded.attribute not in scores:
                continue
            if graded.score is None:
                unparsed[graded.attribute] += 1
            else:
                scores[graded.attribute].append(graded.score)
    return {
        a: AttributeSummary(a, sum(scores[a]) / len(scores[a]) if scores[a] else None, len(scores[a]), unparsed[a])
        for a in attributes
    }
