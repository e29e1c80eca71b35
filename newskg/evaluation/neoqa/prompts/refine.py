"""NeoQA step 2: each outline item gains up to two sentences of specific detail."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import Sentences, numbered, prompt

NAME, VERSION = "neoqa_refine", 1
TEMPLATE = """Make this event outline more detailed. Keep every sentence, and after each one add up to two new
sentences with specific details about it (names, places, numbers, exact dates). One detail per sentence; do not
repeat information; keep the story consistent with what came before.
Answer: {{"items": ["sentence", ...]}} with the original and the new sentences in order.

{outline}

{story}"""


def build(outline: list[str], story: str) -> Prompt[Sentences]:
    return prompt(
        NAME,
        VERSION,
        TEMPLATE,
        Sentences,
        temperature=1.0,
        outline=numbered(outline),
        story=story or "(this is the first event)",
    )
