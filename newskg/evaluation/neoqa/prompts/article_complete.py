"""NeoQA C.4 step 4: any item the article left out is worked in, its style kept."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.article_write import Draft
from newskg.evaluation.neoqa.prompts.base import numbered, prompt

NAME, VERSION = "neoqa_article_complete", 1
TEMPLATE = """Some of the items below are missing from this article. Add each missing fact in the article's own
style, without adding anything else.
Answer: {{"headline": "...", "passages": ["paragraph", ...]}}

{article}

{missing}"""


def build(article: str, missing: list[str]) -> Prompt[Draft]:
    return prompt(NAME, VERSION, TEMPLATE, Draft, article=article, missing=numbered(missing))
