"""NeoQA step 9: a knowledge-base entry for a new entity: a description and properties of its class."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import prompt

NAME, VERSION = "neoqa_kb_entry", 1
FIELDS = {
    "person": "date_of_birth, gender, profession, nationality, education",
    "organization": "founded, headquarters, employees, sector",
    "location": "population, region, country",
    "product": "manufacturer, category, price",
    "art": "creator, medium, year",
    "event": "organizer, venue, budget",
    "building": "location, floors, opened",
    "miscellaneous": "category",
}
TEMPLATE = """Write a knowledge-base entry for this fictional {kind} from the story: a one-sentence description
and the properties {fields}. Invent plausible values; none may refer to anything real.
Answer: {{"description": "...", "properties": {{"property": "value", ...}}}}

{name}

{outline}"""


class KBEntry(BaseModel):
    description: str = Field(min_length=3, max_length=400)
    properties: dict[str, str | int | float] = Field(default_factory=dict[str, str | int | float])


def build(name: str, kind: str, outline: str) -> Prompt[KBEntry]:
    template = TEMPLATE.replace("{kind}", kind).replace("{fields}", FIELDS[kind])
    return prompt(NAME, VERSION, template, KBEntry, temperature=1.0, name=name, outline=outline)
