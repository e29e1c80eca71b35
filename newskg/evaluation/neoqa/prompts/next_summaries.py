"""NeoQA step 11: several diverse one-sentence summaries of how the story could continue."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import Texts, prompt

NAME, VERSION = "neoqa_next_summaries", 1
TEMPLATE = """Suggest {count} different one-sentence summaries of the next event in this fictional story. Vary the
direction: some positive, some negative, some small, some with large consequences.
Answer: {{"summaries": ["...", ...]}}

{story}"""


def build(story: str, count: int = 4) -> Prompt[Texts]:
    return prompt(NAME, VERSION, TEMPLATE.replace("{count}", str(count)), Texts, temperature=1.0, story=story)
