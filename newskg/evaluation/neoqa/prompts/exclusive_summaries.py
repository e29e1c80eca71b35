"""NeoQA step 12: three mutually exclusive versions of the chosen continuation; one is picked at random, so the
story cannot drift toward the most familiar real-world outcome."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import Texts, prompt

NAME, VERSION = "neoqa_exclusive_summaries", 1
TEMPLATE = """Rewrite this planned next event as three one-sentence versions that exclude each other: if one
happens, the other two cannot.
Answer: {{"summaries": ["...", "...", "..."]}}

{summary}"""


def build(summary: str) -> Prompt[Texts]:
    return prompt(NAME, VERSION, TEMPLATE, Texts, temperature=1.0, summary=summary)
