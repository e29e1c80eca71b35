"""Answers: from the LLM when one is configured, else an extractive answer composed from the top evidence,
labelled as such. Either way the evidence goes back with it. When the LLM is configured but fails (down,
erroring, out of budget, or answering in a shape we cannot read) the extractive answer stands in, marked
`extractive_fallback` with the reason: a question never fails because the model did."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import httpx
import openai

from core.llm.client import BudgetExceeded, LLMClient
from core.timeaxes import day_words
from qa.evidence import Evidence
from qa.prompts import answer as answer_prompt

log = logging.getLogger(__name__)
EXTRACTIVE_ITEMS = 5
# What a failing endpoint raises through the client (after its retries): the SDK's errors (connection refused,
# timeouts, 4xx/5xx), the transport's, and the call budget.
LLM_FAILURES = (openai.OpenAIError, httpx.HTTPError, BudgetExceeded)


@dataclass
class Answer:
    text: str
    mode: str  # llm | extractive | extractive_fallback
    fallback_reason: str | None = None


def extractive(reformulated: str, evidence: list[Evidence]) -> str:
    if not evidence:
        return f"Extractive answer (no LLM): the graph holds nothing for {reformulated} as of that day."
    lines = [
        f"{day_words(e.event_day)}: {e.text}" + (f" ({', '.join(e.sources)})" if e.sources else "")
        for e in evidence[:EXTRACTIVE_ITEMS]
    ]
    return "Extractive answer (no LLM), from the graph as of that day:\n" + "\n".join(f"- {line}" for line in lines)


def generate(llm: LLMClient | None, reformulated: str, evidence: list[Evidence]) -> Answer:
    if llm is None or not evidence:
        return Answer(extractive(reformulated, evidence), "extractive")
    prompt = answer_prompt.build(reformulated, [(day_words(e.event_day), e.text, e.sources) for e in evidence])
    try:
        reply = llm.complete(prompt)
    except LLM_FAILURES as exc:
        log.warning("LLM answer failed, answering extractively: %s: %s", type(exc).__name__, exc)
        return _fallback(reformulated, evidence, _failure(exc))
    if reply is None:
        return _fallback(reformulated, evidence, "LLM answer could not be parsed (also after a corrective retry)")
    return Answer(reply.answer.strip(), "llm")


def _failure(exc: Exception) -> str:
    """The reason clients see: the kind of failure and the HTTP status, not the endpoint's body or address (those
    go to the log)."""
    status = getattr(exc, "status_code", None)
    return f"LLM call failed: {type(exc).__name__}" + (f" (HTTP {status})" if status else "")


def _fallback(reformulated: str, evidence: list[Evidence], reason: str) -> Answer:
    return Answer(extractive(reformulated, evidence), "extractive_fallback", reason)
