"""NeoQA step 3: the outline checked against the story so far and corrected, sentence count unchanged."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import Sentences, numbered, prompt

NAME, VERSION = "neoqa_consistency", 1
TEMPLATE = """Check this event outline against the earlier events and the known entities. Correct any sentence
that contradicts them (wrong names, roles, dates, numbers). Return exactly {count} sentences, in the same order,
changing only what must change.
Answer: {{"items": ["sentence", ...]}}

{outline}

{story}

{entities}"""


def build(outline: list[str], story: str, entities: str) -> Prompt[Sentences]:
    return prompt(
        NAME,
        VERSION,
        TEMPLATE.replace("{count}", str(len(outline))),
        Sentences,
        outline=numbered(outline),
        story=story or "(this is the first event)",
        entities=entities or "(none yet)",
    )
