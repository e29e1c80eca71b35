"""Scoring answers against the dev set the way the reference `Scorer` does (fanoutqa/eval/scorer.py), by calling
its functions (see reference.py for why not the class itself):

- which pairs: every question with its answer or none (default), or only the answered ones (`only_answered`,
  the reference's `only_score_answered`), in the reference's order;
- loose accuracy: the mean of `answer_in_text(reference, answer).score`; strict: the share with `.found`;
- ROUGE-1/2/L: the mean precision, recall and F1 of `RougeScorer(ROUGE_TYPES, use_stemmer=True)
  .score(str_answer(reference), str_answer(answer))`;
- an unanswered question scores 0 everywhere (accuracy, every ROUGE part, the judge), as in the reference;
- the judge: B/C/E count 1, other grades 0; an unparsed output is left out of the judge's denominator and counted
  (the reference would have read its last character as a grade);
- BLEURT: not computed (reference.BLEURT_NOT_COMPUTED).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from statistics import fmean

from newskg.evaluation.fanoutqa import reference
from newskg.evaluation.fanoutqa.judge import FactualityJudge
from newskg.evaluation.fanoutqa.records import (
    AccuracyScore,
    AnswerType,
    DevQuestion,
    FanoutReport,
    HopBucket,
    JudgeOutcome,
    JudgeSummary,
    LeaderboardScore,
    QuestionScore,
    RougeScore,
    RougeScorePart,
    SystemAnswer,
)

HOP_BUCKETS: tuple[tuple[str, int, int], ...] = (
    ("5", 0, 5),
    ("6", 6, 6),
    ("7", 7, 7),
    ("8-9", 8, 9),
    ("10-12", 10, 12),
    ("13+", 13, 10**9),
)


def score(
    questions: Sequence[DevQuestion],
    answers: Sequence[SystemAnswer],
    judge: FactualityJudge | None = None,
    only_answered: bool = False,
    on_question: Callable[[], None] | None = None,
    on_judged: Callable[[], None] | None = None,
    answers_file: str | None = None,
) -> FanoutReport:
    """Every figure for `answers` on `questions` (ids must already be checked: `dataset.check_ids`)."""
    pairs = _pairs(questions, answers, only_answered)
    scores: list[QuestionScore] = []
    for question, answer in pairs:
        scores.append(score_one(question, answer))
        if on_question:
            on_question()
    judge_summary = None
    if judge is not None:
        judge_summary = _judge(judge, pairs, scores, on_judged)
    leaderboard = _leaderboard(scores, judge_summary)
    answered = sum(s.answered for s in scores)
    return FanoutReport(
        split="dev",
        answers_file=answers_file,
        questions=len(questions),
        scored=len(scores),
        answered=answered,
        unanswered=len(scores) - answered,
        only_answered=only_answered,
        leaderboard=leaderboard,
        judge=judge_summary,
        by_hops=by_hops(scores),
        notes=_notes(judge),
        provenance=reference.provenance().as_dict(),
        per_question=scores,
    )


def _pairs(
    questions: Sequence[DevQuestion], answers: Sequence[SystemAnswer], only_answered: bool
) -> list[tuple[DevQuestion, AnswerType | None]]:
    """The reference's `get_qa_pairs`: the answers' order when only answered ones count, else the questions'."""
    if only_answered:
        by_id = {q.id: q for q in questions}
        return [(by_id[a.id], a.answer) for a in answers]
    answer_of = {a.id: a.answer for a in answers}
    return [(q, answer_of.get(q.id)) for q in questions]


def score_one(question: DevQuestion, answer: AnswerType | None) -> QuestionScore:
    if answer is None:
        zero = RougeScorePart(precision=0.0, recall=0.0, fscore=0.0)
        loose, strict, missing, rouge = 0.0, False, [], RougeScore(rouge1=zero, rouge2=zero, rougeL=zero)
    else:
        accuracy = reference.answer_in_text(question.answer, answer)
        loose, strict, missing = accuracy.score, accuracy.found, accuracy.missing
        parts = reference.rouge(question.answer, answer)
        rouge = RougeScore.model_validate(
            {k: RougeScorePart(precision=v.precision, recall=v.recall, fscore=v.fmeasure) for k, v in parts.items()}
        )
    return QuestionScore(
        question_id=question.id,
        question=question.question,
        hops=question.hops,
        categories=question.categories,
        answered=answer is not None,
        reference=question.answer,
        answer=answer,
        loose=loose,
        strict=strict,
        missing=missing,
        rouge=rouge,
    )


def _judge(
    judge: FactualityJudge,
    pairs: list[tuple[DevQuestion, AnswerType | None]],
    scores: list[QuestionScore],
    on_judged: Callable[[], None] | None,
) -> JudgeSummary:
    answered: list[tuple[int, tuple[DevQuestion, AnswerType]]] = [
        (i, (q, a)) for i, (q, a) in enumerate(pairs) if a is not None
    ]
    before = (judge.client.usage.calls, judge.client.usage.cached)
    tokens = (judge.client.usage.prompt_tokens, judge.client.usage.completion_tokens)
    outcomes = judge.grade_all([pair for _, pair in answered], on_judged)
    for score_ in scores:
        score_.judge = JudgeOutcome(status="unanswered")
    for (index, _), outcome in zip(answered, outcomes, strict=True):
        scores[index].judge = outcome
    graded = [s.judge for s in scores if s.judge and s.judge.status == "graded"]
    unparsed = sum(1 for s in scores if s.judge and s.judge.status == "unparsed")
    correct = sum(1 for j in graded if j.correct)
    denominator = len(scores) - unparsed
    usage = judge.client.usage
    return JudgeSummary(
        model=judge.model,
        graded=len(graded),
        correct=correct,
        unparsed=unparsed,
        unanswered=len(scores) - len(answered),
        grades=dict(sorted(Counter(j.grade for j in graded if j.grade).items())),
        accuracy=correct / denominator if denominator else None,
        prompt_tokens=usage.prompt_tokens - tokens[0],
        completion_tokens=usage.completion_tokens - tokens[1],
        calls=usage.calls - before[0],
        cached=usage.cached - before[1],
    )


def _mean(values: list[float]) -> float:
    return fmean(values) if values else 0.0


def _leaderboard(scores: list[QuestionScore], judge: JudgeSummary | None) -> LeaderboardScore:
    rouge = {
        kind: RougeScorePart(
            precision=_mean([getattr(s.rouge, kind).precision for s in scores]),
            recall=_mean([getattr(s.rouge, kind).recall for s in scores]),
            fscore=_mean([getattr(s.rouge, kind).fscore for s in scores]),
        )
        for kind in reference.ROUGE_TYPES
    }
    return LeaderboardScore(
        acc=AccuracyScore(loose=_mean([s.loose for s in scores]), strict=_mean([float(s.strict) for s in scores])),
        rouge=RougeScore.model_validate(rouge),
        bleurt=None,
        gpt=None if judge is None else judge.accuracy,
    )


def by_hops(scores: list[QuestionScore]) -> list[HopBucket]:
    buckets: list[HopBucket] = []
    for label, low, high in HOP_BUCKETS:
        members = [s for s in scores if low <= s.hops <= high]
        if not members:
            continue
        judged = [s.judge_raw() for s in members]
        judged_values = [float(v) for v in judged if v is not None]
        buckets.append(
            HopBucket(
                hops=label,
                questions=len(members),
                loose=_mean([s.loose for s in members]),
                strict=_mean([float(s.strict) for s in members]),
                rouge1=_mean([s.rouge.rouge1.fscore for s in members]),
                rouge2=_mean([s.rouge.rouge2.fscore for s in members]),
                rougeL=_mean([s.rouge.rougeL.fscore for s in members]),
                judge=_mean(judged_values) if judged_values else None,
            )
        )
    return buckets


def _notes(judge: FactualityJudge | None) -> list[str]:
    notes = [
        reference.BLEURT_NOT_COMPUTED,
        "Accuracy and ROUGE call the reference package's own functions (answer_in_text, normalize, str_answer) and "
        "rouge-score configured as its Scorer; the Scorer class itself is not importable here (it imports BLEURT).",
    ]
    if judge is None:
        notes.append("LLM judge not run (pass --judge); the leaderboard's gpt field is null, not 0.")
    else:
        notes.append(
            f"LLM judge: {judge.model} with our wording of the paper's A-F factuality rubric (the paper used "
            "gpt-4-0613); B, C, E count as correct; unparsed outputs are counted apart and left out of its "
            "denominator."
        )
    return notes
