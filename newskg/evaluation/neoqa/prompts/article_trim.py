"""NeoQA C.4 step 3: facts the items do not support are removed from the draft, its style kept."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.article_write import Draft
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_article_trim", 1
TEMPLATE = """Remove from this article every fact that the items below do not state (names, numbers, dates,
events). Keep the headline, tone and everything the items support.
Answer: {{"headline": "...", "passages": ["paragraph", ...]}}

{article}

{items}"""


def build(article: str, items: list[str]) -> Prompt[Draft]:
    return prompt(NAME, VERSION, TEMPLATE, Draft, article=article, items=numbered(items))
