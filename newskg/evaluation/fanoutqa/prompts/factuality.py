"""The answer-equivalence judge (FanOutQA §4.1 and appendix H.3, in our own words): compare a system's answer with
the expert's on the facts alone, reason first, and end with one letter of a six-way rubric. B, C and E count as
correct (the reference's rule); an output without a letter is no grade at all (`from_text` returns None, so the
client retries once and then reports it unparsed)."""

from __future__ import annotations

import re

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.fanoutqa.records import Grade
from newskg.evaluation.kit.judge import GraderVerdict, grader_prompt

NAME = "fanoutqa_factuality"
VERSION = 1

TASK = "You grade a submitted answer against an expert's answer to the same question, on factual content only."

TEMPLATE = """{question}

{expert_answer}

{submission}

Decide how the facts in the submission relate to the facts in the expert answer. Wording, formatting, spelling
style and punctuation do not matter; only the facts do. Reason it through step by step before deciding, without
opening with the verdict. Then choose exactly one case:
A: every fact in the submission agrees with the expert answer, but some of the expert's facts are absent.
B: the submission holds every fact of the expert answer, agrees with it, and adds more.
C: the submission and the expert answer hold the same facts.
D: the submission contradicts the expert answer somewhere.
E: they differ, but in nothing that changes the facts.
F: the submission does not answer the question, or is not a usable answer.
End with a line holding only the chosen letter, then repeat that letter alone on one more line."""

# A line that is only the (capital) letter, maybe decorated: "B", "(B)", "**C**", "Answer: E", "Grade - D.";
# or a line ending in "the answer is (B)".
_WORD = r"(?i:(?:final\s+)?(?:answer|grade|verdict|choice|case))"
_LETTER_LINE = re.compile(rf"^[\W_]*(?:{_WORD}\s*[:\-]?\s*)?\(?([A-F])\)?[\W_]*$")
_VERDICT_PHRASE = re.compile(rf"{_WORD}\s+(?i:is)\s*:?\s+\(?([A-F])\)?[\W_]*$")


class Verdict(GraderVerdict[Grade]):
    reasoning: str = ""

    @classmethod
    def from_text(cls, text: str) -> Verdict | None:
        """The last line that is only a rubric letter; None when no line is (prose that merely mentions a letter
        is not a verdict)."""
        lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
        for line in reversed(lines):
            if match := _LETTER_LINE.match(line) or _VERDICT_PHRASE.search(line):
                return cls.model_validate({"grade": match.group(1), "reasoning": text.strip()[:4000]})
        return None


def build(question: str, expert: str, submission: str) -> Prompt[Verdict]:
    inputs = {"question": question, "expert_answer": expert, "submission": submission}
    return grader_prompt(NAME, VERSION, TASK, TEMPLATE, inputs, Verdict, json_answer=False)
