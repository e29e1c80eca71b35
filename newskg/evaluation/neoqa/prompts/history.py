"""NeoQA step 10: one sentence per entity on its part in this event (the KB history)."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_history", 1
TEMPLATE = """For each listed entity, write one sentence on its role in this event or how the event affected it,
using only the outline.
Answer: {{"updates": [{{"name": "...", "update": "..."}}]}}

{entities}

{outline}"""


class Update(BaseModel):
    name: str
    update: str = Field(min_length=3, max_length=400)


class Updates(BaseModel):
    updates: list[Update] = Field(default_factory=list[Update], max_length=80)


def build(names: list[str], outline: list[str]) -> Prompt[Updates]:
    return prompt(NAME, VERSION, TEMPLATE, Updates, entities="\n".join(names), outline=numbered(outline))
