"""NeoQA C.4 step 1: the subsets of an event's outline items a news outlet would report, one per article."""

from pydantic import BaseModel, Field

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import prompt

NAME, VERSION = "neoqa_article_select", 1
TEMPLATE = """You are the editor of {profile}. Choose {count} different groups of outline items for {count}
articles about this event; each group has between 4 and 9 item numbers that fit together in one story.
Answer: {{"subsets": [[1, 4, 5, 9], ...]}}

{outline}"""


class Subsets(BaseModel):
    subsets: list[list[int]] = Field(default_factory=list[list[int]], max_length=10)


def build(profile: str, outline: list[str], count: int) -> Prompt[Subsets]:
    lines = "\n".join(f"[{n}] {s}" for n, s in enumerate(outline, start=1))
    return prompt(
        NAME, VERSION, TEMPLATE.replace("{profile}", profile).replace("{count}", str(count)), Subsets, outline=lines
    )
