"""NEON M2: the interactions between one subject and one object across a batch of k chunks in time order.

Each answer line cites the snippet numbers that state it: a line is dated by the chunks it cites, never by the
whole batch (a fact first reported on day 20 must not appear as of day 1)."""

from __future__ import annotations

import re
from typing import cast

from pydantic import BaseModel, Field, field_validator

from newskg.core.llm.prompt import Prompt, delimit, escape
from newskg.extract.prompts.m1_subject import SYSTEM

NAME = "m2_pair"
VERSION = 2  # v2: every line cites its snippet numbers

TEMPLATE = """Read the numbered news snippets below, oldest first. Entity names are wrapped in <e> and </e>.
List every interaction between the subject and the object that the snippets report.
- One interaction per list item, as a short sentence that names both the subject and the object.
- Use as few words as possible; state only what the snippets say.
- With each item, give the numbers of the snippets that state it (only those).
- If they report no interaction between the two, return an empty list.
Answer with JSON only: {{"interactions": [{{"text": "...", "chunks": [1, 2]}}]}}

{subject}

{object}

{snippets}"""

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s*")
_TRAILING_CITES = re.compile(r"\s*[\[(]\s*((?:\d+\s*[,;]?\s*)+)[\])]\s*\.?\s*$")
_LEADING_CITES = re.compile(r"^\s*\[\s*((?:\d+\s*[,;]?\s*)+)\]\s*")
MAX_LINES = 200


def _numbers(value: object) -> list[int]:
    """Snippet numbers from what a model may write: [2, 3], "2, 3", "[2]", 2."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int):
        return [value]
    if isinstance(value, str):
        return [int(n) for n in re.findall(r"\d+", value)]
    if isinstance(value, list):
        items = cast(list[object], value)  # the model's JSON: a list of anything
        return [n for item in items for n in _numbers(item)]
    return []


class CitedLine(BaseModel):
    text: str
    chunks: list[int] = Field(default_factory=list[int], description="1-based numbers of the snippets that state it")

    @field_validator("text", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return _BULLET.sub("", str(value)).strip()

    @field_validator("chunks", mode="before")
    @classmethod
    def _chunks(cls, value: object) -> list[int]:
        return sorted(set(_numbers(value)))


def _as_line(value: object) -> dict[object, object]:
    """One line of the answer as the dict CitedLine validates: a JSON object as it is, a CitedLine as its fields
    (one built in code; wrapping it as text garbled it into its repr), anything else its text."""
    if isinstance(value, CitedLine):
        return {"text": value.text, "chunks": value.chunks}
    return cast(dict[object, object], value) if isinstance(value, dict) else {"text": value}


class CitedLines(BaseModel):
    interactions: list[CitedLine] = Field(default_factory=list[CitedLine], max_length=MAX_LINES)

    @field_validator("interactions", mode="before")
    @classmethod
    def _lines(cls, value: object) -> list[dict[object, object]]:
        if isinstance(value, str):
            value = value.splitlines()
        if not isinstance(value, list):
            raise ValueError("interactions must be a list")
        items = cast(list[object], value)  # the model's JSON: a list of anything
        # A bare string is a line that cites nothing: kept here, dropped (and counted) by the caller.
        lines = [_as_line(v) for v in items]
        return [line for line in lines if str(line.get("text", "")).strip()][:MAX_LINES]

    @classmethod
    def from_text(cls, text: str) -> CitedLines | None:
        """A model that ignored JSON mode but wrote "sentence [2, 3]" per line is still usable."""
        text = text or ""
        if any(ord(ch) < 32 and ch not in "\n\t\r" for ch in text) or "{" in text or "}" in text:
            return None  # broken output, not prose: worth the corrective retry
        lines: list[dict[str, str]] = []
        for raw in text.splitlines():
            if not raw.strip() or len(raw) >= 400:
                continue
            line, chunks = raw, ""
            if cites := _TRAILING_CITES.search(line):
                line, chunks = line[: cites.start()], cites.group(1)
            elif cites := _LEADING_CITES.match(line):
                line, chunks = line[cites.end() :], cites.group(1)
            lines.append({"text": line, "chunks": chunks})
        # Raw lines, as a model's JSON gives them: validated (and cited) like one, so not through the typed __init__.
        return cls.model_validate({"interactions": lines}) if lines else None


def build(subject: str, obj: str, dated_snippets: list[tuple[str, str]]) -> Prompt[CitedLines]:
    """`dated_snippets`: (date in words, marked-up chunk text) in time order, numbered from 1."""
    numbered = "\n\n".join(f"[{n}] {escape(date)}: {text}" for n, (date, text) in enumerate(dated_snippets, 1))
    user = TEMPLATE.format(
        subject=delimit("subject", subject),
        object=delimit("object", obj),
        snippets=delimit("snippets", numbered, escaped=True),
    )
    return Prompt(NAME, VERSION, [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}], CitedLines)
