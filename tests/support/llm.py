"""A scripted OpenAI-compatible chat endpoint (an httpx transport): the real openai SDK and our LLM client run
unchanged against answers the test decides."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from newskg.core.llm.cache import LLMCache
from newskg.core.llm.client import LLMClient, LLMOptions


def chat_completion(content: str, model: str = "scripted", prompt_tokens: int = 100) -> httpx.Response:
    """What an OpenAI-compatible server answers to a chat completion whose reply is `content`."""
    return httpx.Response(
        200,
        json={
            "id": "x",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": 10, "total_tokens": prompt_tokens + 10},
        },
    )


class Script:
    """An OpenAI-compatible chat endpoint that replays scripted (status, content) replies and records the
    requests."""

    def __init__(self, *replies: tuple[int, str]):
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        status, content = self.replies.pop(0)
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "scripted failure"}})
        return chat_completion(content)


def scripted_client(
    answer: Callable[[httpx.Request], httpx.Response],
    cache_path: Path | None = None,
    model: str = "scripted",
    options: LLMOptions = LLMOptions(),
) -> LLMClient:
    """Our LLM client against the scripted endpoint `answer`, with a response cache at `cache_path` if given."""
    return LLMClient(
        "http://llm.test/v1",
        model,
        cache=LLMCache(cache_path) if cache_path else None,
        options=options,
        http_client=httpx.Client(transport=httpx.MockTransport(answer)),
    )
