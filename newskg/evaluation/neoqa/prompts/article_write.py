"""NeoQA C.4 step 2: a news article in an outlet's voice that reports exactly the chosen outline items."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_article_write", 1
TEMPLATE = """Write a short news article for {profile} ({style}) dated {date} with a headline.
Report every fact in the items below and nothing else: no other names, numbers or dates. Opinion and tone are
fine, new facts are not.
Answer: {{"headline": "...", "passages": ["paragraph", ...]}}

{items}

{entities}"""


class Draft(BaseModel):
    headline: str = Field(min_length=3, max_length=200)
    passages: list[str] = Field(min_length=1, max_length=12)


def build(profile: str, style: str, date: str, items: list[str], entities: str) -> Prompt[Draft]:
    template = TEMPLATE.replace("{profile}", profile).replace("{style}", style).replace("{date}", date)
    return prompt(NAME, VERSION, template, Draft, temperature=1.0, items=numbered(items), entities=entities)
