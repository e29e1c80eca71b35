"""NEON M2: the interactions between one subject and one object across a batch of k chunks in time order."""

from __future__ import annotations

from extract.llm.prompt import Prompt, delimit, escape
from extract.llm.prompts.interactions import InteractionLines
from extract.llm.prompts.m1_subject import SYSTEM

NAME = "m2_pair"
VERSION = 1

TEMPLATE = """Read the numbered news snippets below, oldest first. Entity names are wrapped in <e> and </e>.
List every interaction between the subject and the object that the snippets report.
- One interaction per list item, as a short sentence that names both the subject and the object.
- Use as few words as possible; state only what the snippets say.
- If they report no interaction between the two, return an empty list.
Answer with JSON only: {{"interactions": ["...", "..."]}}

{subject}

{object}

{snippets}"""


def build(subject: str, obj: str, dated_snippets: list[tuple[str, str]]) -> Prompt:
    """`dated_snippets`: (date in words, marked-up chunk text) in time order."""
    numbered = "\n\n".join(f"[{n}] {escape(date)}: {text}" for n, (date, text) in enumerate(dated_snippets, 1))
    user = TEMPLATE.format(subject=delimit("subject", subject), object=delimit("object", obj),
                           snippets=delimit("snippets", numbered, escaped=True))
    return Prompt(NAME, VERSION, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
                  InteractionLines)
