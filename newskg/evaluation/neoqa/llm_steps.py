"""How LLM mode asks: every step's answer is checked by a heuristic critique (NeoQA C.1.2 "critiques"); a failed
check is sent back once with what was wrong, and a second failure stops generation with the step and the reason,
never a half-valid record."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TypeVar

from pydantic import BaseModel

from newskg.core.errors import NewskgError
from newskg.core.llm.client import LLMClient
from newskg.core.llm.prompt import Prompt

T = TypeVar("T", bound=BaseModel)
ATTEMPTS = 2


class LLMGenerationError(NewskgError, RuntimeError):
    """A generation step whose answer stayed invalid after the critique: which step, and why."""

    REASON = "llm_generation_failed"


def ask(client: LLMClient, prompt: Prompt[T], check: Callable[[T], str | None] | None = None) -> T:
    """The step's parsed answer once `check` finds nothing wrong (it returns a problem, or None)."""
    problem = "no answer in the requested JSON shape"
    for _ in range(ATTEMPTS):
        reply = client.complete(prompt)
        if reply is not None:
            problem = check(reply) if check else None
            if problem is None:
                return reply
        critique = {"role": "user", "content": f"That answer cannot be used: {problem}. Answer again, fixing it."}
        previous = {"role": "assistant", "content": reply.model_dump_json() if reply is not None else "(no JSON)"}
        prompt = dataclasses.replace(prompt, messages=[*prompt.messages, previous, critique])
    raise LLMGenerationError(f"{prompt.name}: {problem}")


def count_between(low: int, high: int, field: str = "items") -> Callable[[BaseModel], str | None]:
    def check(reply: BaseModel) -> str | None:
        n = len(getattr(reply, field))
        return None if low <= n <= high else f"it has {n} {field}; between {low} and {high} are needed"

    return check
