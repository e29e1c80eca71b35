"""The answer grader (paper §3.4 and its appendix, after SimpleQA; the rubric in our own words): a predicted
answer is CORRECT, INCORRECT or NOT_ATTEMPTED against the gold answer. The model replies {"grade": …}, asked
with the response model's JSON schema (structured outputs: a grammar on llama.cpp, so the local model can only
write one of the three words; in plain text mode 10 of 20 of its replies echoed the rubric, bench/llm_parse.py).
An endpoint that ignores the schema may still reply in prose: then the grade word alone counts, and an output
holding no grade word, or naming different grade words (an echoed rubric, "CORRECT because it is not
NOT_ATTEMPTED"), is no grade at all: `from_text` returns None, the client retries once, then the grader reports it
unparsed. That is the NEON judge's rule (evaluation/neon/judges/prompts/base.py `Verdict.from_text`): every
verdict in the reply must agree, else the reply is ambiguous."""

from __future__ import annotations

import re
from typing import Literal

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.kit.judge import GraderVerdict, grader_prompt

NAME = "irb_grade"
VERSION = 2  # 2: asked as JSON with the schema (1: one word of plain text)

Grade = Literal["CORRECT", "INCORRECT", "NOT_ATTEMPTED"]

TASK = "You grade a predicted answer to a question against the gold answer."

TEMPLATE = """{question}

{gold_answer}

{predicted_answer}

Grade the predicted answer with one of three words.
CORRECT: it contains the gold answer's meaning (other spellings, short names, added detail that does not
contradict it are fine) and nothing contradicting it. For a question whose gold answer says its premise is
false, the prediction is CORRECT only when it points out that the premise is wrong.
INCORRECT: it states something that contradicts the gold answer, even with hedging, or it names several
candidates of which one is wrong; answering a false-premise question as if its premise held is INCORRECT.
NOT_ATTEMPTED: it gives no answer ("I don't know", "the passages do not say", a request for more context)
without contradicting the gold answer. Saying you don't know is never CORRECT.
Reply with JSON only: {{"grade": "CORRECT"}}, {{"grade": "INCORRECT"}} or {{"grade": "NOT_ATTEMPTED"}}."""

# A grade word on its own (decorated or after "Grade:"); "NOT ATTEMPTED" as well.
_GRADE = re.compile(r"\b(NOT[_ ]ATTEMPTED|INCORRECT|CORRECT)\b")


class GradeVerdict(GraderVerdict[Grade]):
    @classmethod
    def from_text(cls, text: str) -> GradeVerdict | None:
        """The upper-case grade word of the reply, repeated or not; None when there is none (lower-case prose that
        mentions "correct" is not a verdict) or when the reply names different grade words (ambiguous)."""
        words = {str(found).replace(" ", "_") for found in _GRADE.findall(text or "")}
        if len(words) != 1:
            return None
        return cls.model_validate({"grade": words.pop()})


def gold_text(answer: str, aliases: list[str], false_premise: str | None) -> str:
    if false_premise:
        return f"The question's premise is false ({false_premise}); the true value is {answer}."
    return answer + (f" (also accepted: {', '.join(aliases)})" if aliases else "")


def build(question: str, gold: str, predicted: str) -> Prompt[GradeVerdict]:
    inputs = {"question": question, "gold_answer": gold, "predicted_answer": predicted}
    return grader_prompt(NAME, VERSION, TASK, TEMPLATE, inputs, GradeVerdict)
