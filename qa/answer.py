"""Answers: from the LLM when one is configured, else an extractive answer composed from the top evidence,
labelled as such. Either way the evidence goes back with it."""

from __future__ import annotations

from extract.llm.client import LLMClient
from extract.openie.llm_variants import day_words
from qa.evidence import Evidence
from qa.prompts import answer as answer_prompt

EXTRACTIVE_ITEMS = 5


def extractive(reformulated: str, evidence: list[Evidence]) -> str:
    if not evidence:
        return f"Extractive answer (no LLM): the graph holds nothing for {reformulated} as of that day."
    lines = [f"{day_words(e.event_day)}: {e.text}" + (f" ({', '.join(e.sources)})" if e.sources else "")
             for e in evidence[:EXTRACTIVE_ITEMS]]
    return "Extractive answer (no LLM), from the graph as of that day:\n" + "\n".join(f"- {line}" for line in lines)


def generate(llm: LLMClient | None, reformulated: str, evidence: list[Evidence]) -> tuple[str, str]:
    """(answer, mode): mode is "llm" or "extractive" (also when the LLM's output could not be used)."""
    if llm is None or not evidence:
        return extractive(reformulated, evidence), "extractive"
    prompt = answer_prompt.build(reformulated, [(day_words(e.event_day), e.text, e.sources) for e in evidence])
    reply = llm.complete(prompt)
    if reply is None:
        return extractive(reformulated, evidence), "extractive"
    return reply.answer.strip(), "llm"
