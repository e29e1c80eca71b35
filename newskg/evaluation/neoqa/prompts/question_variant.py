"""NeoQA C.2.3: unanswerable variants of a multi-hop question: a false premise (a subtle change that contradicts
the items) or uncertain specificity (an added detail the story neither confirms nor denies)."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_question_variant", 1
KINDS = {
    "false-premise": "Change one small detail of the question so that it contradicts the items.",
    "uncertain-specificity": "Add one specific detail to the question that the items neither confirm nor deny.",
}
TEMPLATE = """{kind} Keep the rest of the question as it is.
Answer: {{"question": "..."}}

{question}

{items}"""


class Variant(BaseModel):
    question: str = Field(min_length=10, max_length=400)


def build(kind: str, question: str, items: list[str]) -> Prompt[Variant]:
    return prompt(
        NAME, VERSION, TEMPLATE.replace("{kind}", KINDS[kind]), Variant, question=question, items=numbered(items)
    )
