"""FanOutQA (Zhu et al., the FanOutQA paper) as typed records: the dev and test questions as the reference package
ships them, a system's answers in the leaderboard's `[{"id", "answer"}]` shape, and the scores.

Answers keep their JSON type exactly (strict unions): the reference stringifies `1`, `1.0` and `True` differently
("1", "1.0", "yes"), so a coerced type would change a figure.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

Primitive = StrictBool | StrictInt | StrictFloat | StrictStr
AnswerType = dict[str, Primitive] | list[Primitive] | Primitive
Split = Literal["dev", "test"]
Grade = Literal["A", "B", "C", "D", "E", "F"]
CORRECT_GRADES: frozenset[str] = frozenset("BCE")  # the reference: B, C, E full score, anything else 0


class Evidence(BaseModel):
    """A Wikipedia page as of the dataset's snapshot (2023-11-20)."""

    model_config = ConfigDict(frozen=True)
    pageid: int
    revid: int
    title: str
    url: str


class GraphEvidence(BaseModel):
    """Where a generated question's sub-answer stands in our graph (the counterpart of a Wikipedia page): the
    interaction that states it and the articles that reported it by the question's day."""

    model_config = ConfigDict(frozen=True)
    interaction_id: str
    article_ids: list[str]
    urls: list[str] = Field(default_factory=list)
    event_day: int


class SubQuestion(BaseModel):
    """A human-written step of a decomposition: answered from one page (`evidence`) or decomposed further."""

    id: str
    question: str
    decomposition: list[SubQuestion] = Field(default_factory=lambda: list[SubQuestion]())  # itself: not yet bound
    answer: AnswerType
    depends_on: list[str] = Field(default_factory=list)
    evidence: Evidence | GraphEvidence | None = None


def _walk_evidence(steps: list[SubQuestion]) -> list[Evidence | GraphEvidence]:
    found: list[Evidence | GraphEvidence] = []
    for step in steps:
        if step.evidence is not None:
            found.append(step.evidence)
        found.extend(_walk_evidence(step.decomposition))
    return found


class DevQuestion(BaseModel):
    id: str
    question: str
    decomposition: list[SubQuestion]
    answer: AnswerType
    categories: list[str] = Field(default_factory=list)

    @property
    def necessary_evidence(self) -> list[Evidence | GraphEvidence]:
        """Every page the annotators used, in decomposition order (the reference's `necessary_evidence`)."""
        return _walk_evidence(self.decomposition)

    @property
    def hops(self) -> int:
        """Pages needed to answer: the paper's hop count (on average seven per question)."""
        return len(self.necessary_evidence)


class GeneratedQuestion(DevQuestion):
    """A FanOutQA-style question generated from our graph as of `as_of` (evaluation/fanoutqa/generate.py), in the
    dev set's JSON shape plus where it came from: the hub entity, the window, the source (news | neoqa)."""

    as_of: str
    source: Literal["news", "neoqa"]
    hub_id: str
    hub_name: str
    from_day: int
    to_day: int


class TestQuestion(BaseModel):
    """The test split ships no answers and no decomposition: only the pages the annotators used."""

    __test__ = False  # not a pytest class
    id: str
    question: str
    necessary_evidence: list[Evidence]
    categories: list[str] = Field(default_factory=list)

    @property
    def hops(self) -> int:
        return len(self.necessary_evidence)


class SystemAnswer(BaseModel):
    """One entry of an answers file. The leaderboard asks for a string; any JSON answer of the dataset's own
    shapes (number, bool, list, dict) is accepted and handed to the reference functions as it is."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1)
    answer: AnswerType


class RougeScorePart(BaseModel):
    precision: float
    recall: float
    fscore: float


class RougeScore(BaseModel):
    rouge1: RougeScorePart
    rouge2: RougeScorePart
    rougeL: RougeScorePart


class JudgeOutcome(BaseModel):
    """The LLM judge on one answer. `status` unparsed: the model's output held no grade, even after the client's
    corrective retry; it is counted apart and never read as a grade."""

    status: Literal["graded", "unparsed", "unanswered"]
    grade: Grade | None = None
    reasoning: str = ""

    @property
    def correct(self) -> bool | None:
        return None if self.grade is None else self.grade in CORRECT_GRADES


class QuestionScore(BaseModel):
    """Every figure for one question (`raw` of the leaderboard shape, plus what our report shows)."""

    question_id: str
    question: str
    hops: int
    categories: list[str]
    answered: bool
    reference: AnswerType
    answer: AnswerType | None
    loose: float
    strict: bool
    missing: list[str]
    rouge: RougeScore
    judge: JudgeOutcome | None = None

    def judge_raw(self) -> int | None:
        """The reference's per-question `gpt`: 1 for B/C/E, 0 otherwise and for no answer; None when the judge
        did not run or its output held no grade."""
        if self.judge is None or self.judge.status == "unparsed":
            return None
        return int(bool(self.judge.correct))


class AccuracyScore(BaseModel):
    loose: float
    strict: float


class LeaderboardScore(BaseModel):
    """The reference `EvaluationScore.to_dict()` shape. `bleurt` is None (not computed, see `notes`); `gpt` is the
    judged accuracy, None when the judge did not run (the reference writes 0 then)."""

    acc: AccuracyScore
    rouge: RougeScore
    bleurt: float | None
    gpt: float | None


class JudgeSummary(BaseModel):
    model: str
    graded: int
    correct: int
    unparsed: int
    unanswered: int
    grades: dict[str, int]
    accuracy: float | None  # correct / (scored questions - unparsed); unanswered count 0 as in the reference
    prompt_tokens: int
    completion_tokens: int
    calls: int
    cached: int


class HopBucket(BaseModel):
    hops: str
    questions: int
    loose: float
    strict: float
    rouge1: float
    rouge2: float
    rougeL: float
    judge: float | None


class SubAnswer(BaseModel):
    """One step of an answerer's run: the sub-question, the entity it was resolved to, the evidence retrieved as
    of the day (ids, days, text) and the sub-answer read from it."""

    id: str
    kind: Literal["list", "attribute", "whole"]
    question: str
    item: str | None = None
    entity_id: str | None = None
    evidence: list[dict[str, object]] = Field(default_factory=list[dict[str, object]])
    answer: AnswerType | None = None


class AnswerTrace(BaseModel):
    """How an answerer reached one answer: its decomposition (and who made it), every step, the final answer."""

    question_id: str
    answerer: str
    decomposed_by: str
    as_of: str | None
    steps: list[SubAnswer]
    answer: AnswerType | None
    seconds: float


class FanoutReport(BaseModel):
    split: Split | Literal["generated"]
    answers_file: str | None
    questions: int
    scored: int  # the denominator: every question, or only the answered ones (only_answered)
    answered: int
    unanswered: int
    only_answered: bool
    leaderboard: LeaderboardScore
    judge: JudgeSummary | None
    by_hops: list[HopBucket]
    notes: list[str]
    provenance: dict[str, str]
    per_question: list[QuestionScore]
    traces: list[AnswerTrace] = Field(default_factory=list[AnswerTrace])  # when the run answered the questions itself

    def leaderboard_json(self) -> dict[str, Any]:
        """The reference's full `EvaluationScore` (with `raw`, one entry per scored question)."""
        raw = [
            {
                "question_id": q.question_id,
                "acc": q.loose,
                "rouge": q.rouge.model_dump(),
                "bleurt": None,
                "gpt": q.judge_raw(),
            }
            for q in self.per_question
        ]
        return {**self.leaderboard.model_dump(), "raw": raw}
