"""A prompt: its name and version (part of the cache key), its messages and the model of its answer."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Generic

from pydantic import BaseModel
from typing_extensions import TypeVar

# The answer's model; a bare `Prompt` answers some BaseModel.
M = TypeVar("M", bound=BaseModel, default=BaseModel, covariant=True)


@dataclass(frozen=True)
class Prompt(Generic[M]):
    name: str
    version: int
    messages: list[dict[str, str]]
    response_model: type[M]
    json_answer: bool = True  # False: free text the response model reads with its `from_text`
    temperature: float = 0.0  # creative generation steps (NeoQA's timelines) ask for more than 0

    def digest(self, model: str) -> str:
        parts: list[object] = [model, self.name, self.version, self.messages]
        if self.temperature:  # keeps the keys of every existing deterministic prompt unchanged
            parts.append(self.temperature)
        body = json.dumps(parts, ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(body.encode("utf-8")).hexdigest()


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def delimit(tag: str, text: str, escaped: bool = False) -> str:
    """Untrusted text inside a named block. Its angle brackets are escaped (unless the caller already did, as
    `mark_up` does), so the text can neither close the block nor forge a tag."""
    return f"<{tag}>\n{text if escaped else escape(text)}\n</{tag}>"
