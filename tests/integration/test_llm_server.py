"""The local llama.cpp server speaks the OpenAI wire protocol (`newskg services up --llm`)."""

import pytest
from openai import OpenAI

from newskg.wiring import llm_base_url

pytestmark = [pytest.mark.integration, pytest.mark.llm]


def test_chat_completion_over_the_wire(llm_stack):
    base = llm_base_url(llm_stack.settings)
    assert base and base.startswith("http://127.0.0.1:")
    client = OpenAI(base_url=base, api_key="local")
    reply = client.chat.completions.create(
        model="smollm2", max_tokens=16, temperature=0, messages=[{"role": "user", "content": "Say hello."}]
    )
    assert reply.choices[0].message.content.strip()
    assert reply.usage.completion_tokens > 0
