"""NeoQA C.2: a question answered only by combining two outline items: multi-hop (through a bridge entity the
question describes instead of naming) or time-span (the days between two dated moments)."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_question_write", 1
KINDS = {
    "multi-hop": "Ask about {bridge} using a fact from one item, but refer to {bridge} only through what the "
    "other item says about them (never by name).",
    "time-span": "Ask how many days passed between the two dated moments the items describe. The answer is a "
    'number of days, like "23 days".',
}
TEMPLATE = """Write one question that needs both items below to answer, with its short answer. {kind}
The question must have exactly one correct answer given the story so far, and be asked as of the later item.
Answer: {{"question": "...", "answer": "..."}}

{items}

{story}"""


class Written(BaseModel):
    question: str = Field(min_length=10, max_length=400)
    answer: str = Field(min_length=1, max_length=200)


def build(kind: str, items: list[str], story: str, bridge: str = "") -> Prompt[Written]:
    instruction = KINDS[kind].replace("{bridge}", bridge)
    return prompt(NAME, VERSION, TEMPLATE.replace("{kind}", instruction), Written, items=numbered(items), story=story)
