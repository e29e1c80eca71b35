"""The LLM judge over many answers: the factuality prompt through the project's client (cached, cost-accounted,
one corrective retry), a few questions at a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from newskg.core.llm.client import LLMClient
from newskg.evaluation.fanoutqa import reference
from newskg.evaluation.fanoutqa.prompts import factuality
from newskg.evaluation.fanoutqa.records import AnswerType, DevQuestion, JudgeOutcome
from newskg.evaluation.kit.judge import ask_grader


class FactualityJudge:
    def __init__(self, client: LLMClient, workers: int = 4):
        self.client = client
        self.workers = max(1, workers)

    @property
    def model(self) -> str:
        return self.client.model

    def grade(self, question: DevQuestion, answer: AnswerType) -> JudgeOutcome:
        """One answer; the reference answer is stringified as the reference does (`str_answer`), and the
        submission is cut to the reference's 4000 characters (it trims runaway generations the same way)."""
        submission = answer if isinstance(answer, str) else reference.str_answer(answer)
        prompt = factuality.build(
            question.question,
            reference.str_answer(question.answer),
            submission[: reference.JUDGE_MAX_ANSWER_CHARS],
        )
        verdict = ask_grader(self.client, prompt)
        if verdict is None:
            return JudgeOutcome(status="unparsed")
        return JudgeOutcome(status="graded", grade=verdict.grade, reasoning=verdict.reasoning)

    def grade_all(
        self,
        pairs: Sequence[tuple[DevQuestion, AnswerType]],
        on_done: Callable[[], None] | None = None,
    ) -> list[JudgeOutcome]:
        """In input order. An error reaching the LLM (after the client's retries) or a spent budget propagates:
        the run stops rather than report a judge figure over part of the answers."""

        def one(pair: tuple[DevQuestion, AnswerType]) -> JudgeOutcome:
            outcome = self.grade(*pair)
            if on_done:
                on_done()
            return outcome

        with ThreadPoolExecutor(self.workers) as pool:
            return list(pool.map(one, pairs))
