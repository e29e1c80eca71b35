"""The answer shape both extraction prompts share: a list of one-line interactions."""

from __future__ import annotations

import re
from typing import cast

from pydantic import BaseModel, Field, field_validator

_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)]|\[\d+\])\s*")


class InteractionLines(BaseModel):
    interactions: list[str] = Field(default_factory=list[str], max_length=200)

    @field_validator("interactions", mode="before")
    @classmethod
    def _lines(cls, value: object) -> list[str]:
        if isinstance(value, str):
            value = value.splitlines()
        if not isinstance(value, list):
            raise ValueError("interactions must be a list of strings")
        items = cast(list[object], value)  # the model's JSON: a list of anything, each made a string here
        return [line for line in (_BULLET.sub("", str(v)).strip() for v in items) if line][:200]

    @classmethod
    def from_text(cls, text: str) -> InteractionLines | None:
        """A model that ignored JSON mode but wrote one interaction per line is still usable."""
        text = text or ""
        if any(ord(ch) < 32 and ch not in "\n\t\r" for ch in text) or "{" in text or "}" in text:
            return None  # broken output, not prose: worth the corrective retry
        lines = [line for line in text.splitlines() if line.strip() and len(line) < 400]
        return cls(interactions=lines) if lines else None
