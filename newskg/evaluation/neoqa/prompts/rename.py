"""NeoQA step 5: a different, invented name for an entity whose name belongs to a real one."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import prompt

NAME, VERSION = "neoqa_rename", 1
TEMPLATE = """The name below belongs to something real. Invent a new name of the same kind ({kind}) that fits
the story, at most five words, with no brackets, and that is not the name of anything real.
Answer: {{"name": "..."}}

{name}

{context}"""


class NewName(BaseModel):
    name: str = Field(min_length=2, max_length=60)


def build(name: str, kind: str, context: str) -> Prompt[NewName]:
    return prompt(NAME, VERSION, TEMPLATE.replace("{kind}", kind), NewName, temperature=1.0, name=name, context=context)
