"""NeoQA C.2 step 3: five plausible but wrong answers, each with why it misleads and why it is wrong."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_distractors", 1
TEMPLATE = """Write five wrong answers to the question that a careless reader could pick: use details from the
story where possible, make them the same kind and length as the correct answer, and make sure none is correct.
Answer: {{"distractors": [{{"answer": "...", "explanation": "why it is tempting and why it is wrong"}}]}}

{question}

{answer}

{story}"""


class Option(BaseModel):
    answer: str = Field(min_length=1, max_length=200)
    explanation: str = ""


class Options(BaseModel):
    distractors: list[Option] = Field(default_factory=list[Option], max_length=10)


def build(question: str, answer: str, items: list[str]) -> Prompt[Options]:
    return prompt(NAME, VERSION, TEMPLATE, Options, question=question, answer=answer, story=numbered(items))
