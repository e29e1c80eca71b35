"""NeoQA steps 4 and 7: the named entities an outline mentions, with one of the 8 entity classes."""

from typing import Literal

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_entities", 1
Kind = Literal["person", "organization", "location", "product", "art", "event", "building", "miscellaneous"]
TEMPLATE = """List every named entity in this outline: people, organizations, locations, products, works of art,
named events, buildings, and other named things (miscellaneous). Use the name exactly as written, at most five
words. Do not list dates or numbers.
Answer: {{"entities": [{{"name": "...", "type": "..."}}]}} where type is one of person, organization, location,
product, art, event, building, miscellaneous.

{outline}"""


class Found(BaseModel):
    name: str = Field(min_length=2, max_length=80)
    type: Kind


class FoundEntities(BaseModel):
    entities: list[Found] = Field(default_factory=list[Found], max_length=80)


def build(outline: list[str]) -> Prompt[FoundEntities]:
    return prompt(NAME, VERSION, TEMPLATE, FoundEntities, outline=numbered(outline))
