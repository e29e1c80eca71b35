"""Answers: from the LLM when one is configured, else an extractive answer, labelled as such: the evidence
sentences most similar to the full question (embedding similarity with the mirror's embedder, a lexical score
without one), each with its date and sources. Either way the evidence goes back with it. When the LLM is
configured but fails (down, erroring, out of budget, or answering in a shape we cannot read) the extractive
answer stands in, marked `extractive_fallback` with the reason: a question never fails because the model did.

The extractive answer embeds no evidence it was handed scored: an interaction is one sentence, embedded once when
it was mirrored, and retrieval's cosine of it to the query (Evidence.similarity) is its sentence's score; only a
sentence without one (a chunk's several sentences) is embedded per request."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from newskg.core.timeaxes import day_words
from newskg.graph.mirror.embed import Embedder
from newskg.qa.evidence import Evidence
from newskg.qa.prompts import answer as answer_prompt
from newskg.qa.similarity import QueryTexts, cosine, lexical, query_vector, sentences

if TYPE_CHECKING:  # the LLM client's module imports the openai SDK (~38 MB): an extractive API never loads it
    from newskg.core.llm.client import LLMClient

log = logging.getLogger(__name__)
EXTRACTIVE_ITEMS = 5  # sentences in an extractive answer
AnswerMode = Literal["llm", "extractive", "extractive_fallback"]


@dataclass
class Answer:
    text: str
    mode: AnswerMode
    fallback_reason: str | None = None


@dataclass(frozen=True)
class _Sentence:
    text: str
    evidence: Evidence
    rank: int  # the evidence's retrieval rank, then the sentence's place in it: the order among equals


def best_sentences(
    question: str | QueryTexts, evidence: list[Evidence], embedder: Embedder | None = None, n: int = EXTRACTIVE_ITEMS
) -> list[tuple[str, Evidence]]:
    """The n evidence sentences most similar to the question (each once), best first."""
    query = QueryTexts.of(question)
    pool: list[_Sentence] = []
    seen: set[str] = set()
    for rank, e in enumerate(evidence):
        for sentence in sentences(e.text):
            if sentence.casefold() not in seen:
                seen.add(sentence.casefold())
                pool.append(_Sentence(sentence, e, rank))
    if not pool:
        return []
    if _in_retrieval_order(query, evidence):
        return [(s.text, s.evidence) for s in pool[:n]]
    scores = _similarities(query, pool, embedder) if embedder else lexical(query, [s.text for s in pool])
    order = sorted(range(len(pool)), key=lambda i: (-round(scores[i], 6), pool[i].rank, i))
    return [(pool[i].text, pool[i].evidence) for i in order[:n]]


def _in_retrieval_order(query: QueryTexts, evidence: list[Evidence]) -> bool:
    """A name alone asked of facts: retrieval ranked them by salience (qa/retrieve.Retriever._by_salience) or by
    fusion, and similarity to a bare name, which every fact of the entity holds, would only undo that order."""
    return query.name_alone and all(e.kind == "interaction" for e in evidence)


def _similarities(query: QueryTexts, pool: list[_Sentence], embedder: Embedder) -> list[float]:
    """Each sentence's cosine to the query: retrieval's, when the evidence is that one sentence and was scored
    against this query under this model (an interaction: the mirror's vector of it, embedded when it was written);
    the other sentences (a chunk's, or evidence scored otherwise) embedded here, with the query."""
    scores = [_scored(s, query, embedder.name) for s in pool]
    missing = [i for i, score in enumerate(scores) if score is None]
    if missing:
        fresh = cosine(query_vector(embedder, query), embedder.embed([pool[i].text for i in missing]))
        for i, score in zip(missing, fresh, strict=True):
            scores[i] = score
    return [0.0 if score is None else score for score in scores]


def _scored(sentence: _Sentence, query: QueryTexts, model: str) -> float | None:
    similarity = sentence.evidence.similarity
    if similarity is None or similarity.model != model or similarity.query != query:
        return None
    return similarity.cosine if sentence.text == sentence.evidence.text.strip() else None


def extractive(question: str | QueryTexts, evidence: list[Evidence], embedder: Embedder | None = None) -> str:
    query = QueryTexts.of(question)
    if not evidence:
        return f"Extractive answer (no LLM): the graph holds nothing for {query.reformulated} as of that day."
    lines = [
        f"{day_words(e.event_day)}: {text}" + (f" ({', '.join(e.sources)})" if e.sources else "")
        for text, e in best_sentences(query, evidence, embedder)
    ]
    return "Extractive answer (no LLM), from the graph as of that day:\n" + "\n".join(f"- {line}" for line in lines)


def generate(
    llm: LLMClient | None, question: str | QueryTexts, evidence: list[Evidence], embedder: Embedder | None = None
) -> Answer:
    """`question`: the reformulated query, or both forms (the prompt shows both; the extractive answer ranks
    sentences by both)."""
    query = QueryTexts.of(question)
    if llm is None or not evidence:
        return Answer(extractive(query, evidence, embedder), "extractive")
    prompt = answer_prompt.build(
        query.reformulated, [(day_words(e.event_day), e.text, e.sources) for e in evidence], query.original
    )
    try:
        reply = llm.complete(prompt, answer_prompt.Answer)
    except llm_failures() as exc:
        log.warning("LLM answer failed, answering extractively: %s: %s", type(exc).__name__, exc)
        return Answer(extractive(query, evidence, embedder), "extractive_fallback", _failure(exc))
    if reply is None:
        reason = "LLM answer could not be parsed (also after a corrective retry)"
        return Answer(extractive(query, evidence, embedder), "extractive_fallback", reason)
    return Answer(reply.answer.strip(), "llm")


def llm_failures() -> tuple[type[Exception], ...]:
    """What a failing endpoint raises through the client (after its retries): the SDK's errors (connection refused,
    timeouts, 4xx/5xx), the transport's, and the call budget. Imported here, when an LLM was called: the openai SDK
    is ~38 MB of the QA API's RSS, which an extractive API (no LLM) does not need (issue 30)."""
    import httpx
    import openai

    from newskg.core.llm.client import BudgetExceeded

    return (openai.OpenAIError, httpx.HTTPError, BudgetExceeded)


def _failure(exc: Exception) -> str:
    """The reason clients see: the kind of failure and the HTTP status, not the endpoint's body or address (those
    go to the log)."""
    status: object = getattr(exc, "status_code", None)
    return f"LLM call failed: {type(exc).__name__}" + (f" (HTTP {status})" if status else "")
