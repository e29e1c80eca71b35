"""NeoQA step 1: a new event outline from its seed summary, the story so far and the known entities."""

from newskg.core.llm.prompt import Prompt
from newskg.evaluation.neoqa.prompts.base import Sentences, prompt

NAME, VERSION = "neoqa_outline", 1
TEMPLATE = """Write the outline of the next event in a fictional news story, dated {date}.
- Exactly {count} sentences; each states one distinct, concrete detail (who, what, where, numbers, dates).
- Continue the story consistently; reuse known entities by their exact names where it fits; invent new ones.
- No real people, places, companies or events.
Answer: {{"items": ["sentence", ...]}}

{summary}

{story}

{entities}"""


def build(summary: str, story: str, entities: str, date: str, count: int) -> Prompt[Sentences]:
    return prompt(
        NAME,
        VERSION,
        TEMPLATE.replace("{date}", date).replace("{count}", str(count)),
        Sentences,
        temperature=1.0,
        summary=summary,
        story=story or "(this is the first event)",
        entities=entities or "(none yet)",
    )
