"""IRB answering and grading (paper §3.4).

Answerers: closed-book (no passages) and RAG (the top-k passages of one retriever), through the project's LLM
client when one is configured. Offline, RAG answers extractively — the passage sentence most similar to the
question (qa.answer.best_sentences) — and closed-book gives no answer at all (graded NOT_ATTEMPTED): there is no
model to know anything.

Graders: the LLM grader (a SimpleQA-style rubric, prompts/grade.py) through the client — cached, cost-accounted,
an unparsable reply counted apart, never a grade — and, with no LLM configured, the *deterministic* grader:
normalised containment of the answer or an alias, refusal phrases, and for a false-premise question a phrase that
rejects the premise. Reports name which grader produced every figure."""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import Literal

from newskg.core.ids import normalise_text
from newskg.core.llm.client import LLMClient
from newskg.core.llm.prompt import Prompt
from newskg.core.timeaxes import day_iso
from newskg.evaluation.irb.prompts import closed_book, grade, rag
from newskg.evaluation.irb.prompts.closed_book import IRBReply
from newskg.evaluation.irb.prompts.grade import Grade
from newskg.evaluation.irb.records import IRBQuestion
from newskg.evaluation.irb.retrieval import Passage
from newskg.evaluation.kit.judge import ask_grader
from newskg.qa.answer import best_sentences, llm_failures
from newskg.qa.evidence import Evidence

AnswerStatus = Literal["answered", "none", "unparsed", "failed"]
GraderName = Literal["llm", "deterministic"]
GradeStatus = Literal["graded", "unparsed"]


@dataclass(frozen=True)
class Prediction:
    text: str | None  # None: no answer (closed-book offline, an unparsable or failed LLM reply)
    status: AnswerStatus
    mode: Literal["llm", "extractive", "none"]


@dataclass(frozen=True)
class Graded:
    status: GradeStatus
    grade: Grade | None  # None only when unparsed
    grader: GraderName


NO_ANSWER = Prediction(None, "none", "none")


class Answerer:
    """Closed-book and RAG answers for IRB questions; `llm` None: the offline answers described above."""

    def __init__(self, llm: LLMClient | None):
        self.llm = llm

    def closed_book(self, q: IRBQuestion) -> Prediction:
        if self.llm is None:
            return NO_ANSWER
        return self._ask(closed_book.build(q.question, day_iso(q.as_of)))

    def rag(self, q: IRBQuestion, passages: list[Passage]) -> Prediction:
        if self.llm is None:
            return extractive(q.question, passages)
        return self._ask(rag.build(q.question, [p.text for p in passages], day_iso(q.as_of)))

    def _ask(self, prompt: Prompt[IRBReply]) -> Prediction:
        assert self.llm is not None
        try:
            reply = self.llm.complete(prompt)
        except llm_failures():
            return Prediction(None, "failed", "llm")
        if reply is None:
            return Prediction(None, "unparsed", "llm")
        return Prediction(reply.answer.strip(), "answered", "llm")


def extractive(question: str, passages: list[Passage]) -> Prediction:
    """The one passage sentence most similar to the question (lexically): an answer only in the sense that it
    holds the words the answer is among."""
    evidence = [Evidence(p.chunk_id, "chunk", p.text, p.day, p.day, 0.0) for p in passages]
    best = best_sentences(question, evidence, None, n=1)
    if not best:
        return Prediction(None, "none", "extractive")
    return Prediction(best[0][0], "answered", "extractive")


# --- the deterministic grader

_REFUSALS = (
    "i don't know",
    "i do not know",
    "don't know",
    "not sure",
    "cannot tell",
    "can't tell",
    "cannot determine",
    "cannot answer",
    "unable to",
    "no information",
    "not enough information",
    "do not say",
    "does not say",
    "don't say",
    "not mentioned",
    "unknown",
)
_EXPLICIT_REJECTIONS = (
    "false premise",
    "premise is false",
    "premise is wrong",
    "premise is incorrect",
    "incorrect premise",
)
# Weaker wording counts as a rejection only on a false-premise question (a plain sentence may say "did not").
_PREMISE_REJECTIONS = (
    *_EXPLICIT_REJECTIONS,
    "is not true",
    "isn't true",
    "not the case",
    "did not",
    "didn't",
    "never",
    "actually",
    "in fact",
)
_PUNCT = str.maketrans({c: " " for c in string.punctuation + "\u2019\u2018\u201c\u201d"})
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalise(text: str) -> str:
    """Case, Unicode form, punctuation, articles and spacing removed (SQuAD-style), apostrophes kept in words."""
    text = normalise_text(text).replace("'", "").replace("\u2019", "")
    return " ".join(_ARTICLES.sub(" ", text.translate(_PUNCT)).split())


def _has(haystack: str, needle: str) -> bool:
    needle = normalise(needle)
    return bool(needle) and re.search(rf"(?:^| ){re.escape(needle)}(?: |$)", haystack) is not None


def _says(text: str, phrases: tuple[str, ...]) -> bool:
    lowered = " ".join(normalise_text(text).replace("\u2019", "'").split())
    return any(phrase in lowered for phrase in phrases)


def grade_deterministic(q: IRBQuestion, prediction: Prediction) -> Graded:
    """No text, or a refusal: NOT_ATTEMPTED. A false-premise question: CORRECT when the answer rejects the
    premise, INCORRECT when it answers along. Otherwise CORRECT when the answer or an alias appears (as whole
    words, normalised) and the premise is not rejected, INCORRECT when not."""
    text = (prediction.text or "").strip()
    if not text:
        return Graded("graded", "NOT_ATTEMPTED", "deterministic")
    if q.expected == "reject_premise":
        if _says(text, _PREMISE_REJECTIONS):
            return Graded("graded", "CORRECT", "deterministic")
        return Graded("graded", "NOT_ATTEMPTED" if _says(text, _REFUSALS) else "INCORRECT", "deterministic")
    flat = normalise(text)
    if any(_has(flat, name) for name in (q.answer, *q.aliases)) and not _says(text, _EXPLICIT_REJECTIONS):
        return Graded("graded", "CORRECT", "deterministic")
    if _says(text, _REFUSALS):
        return Graded("graded", "NOT_ATTEMPTED", "deterministic")
    return Graded("graded", "INCORRECT", "deterministic")


class Grader:
    """The LLM grader when a client is given, the deterministic one otherwise. A prediction with no text is
    NOT_ATTEMPTED without asking the model (nothing to grade)."""

    def __init__(self, llm: LLMClient | None):
        self.llm = llm

    @property
    def name(self) -> GraderName:
        return "llm" if self.llm else "deterministic"

    def grade(self, q: IRBQuestion, prediction: Prediction) -> Graded:
        if self.llm is None:
            return grade_deterministic(q, prediction)
        if not (prediction.text or "").strip():
            return Graded("graded", "NOT_ATTEMPTED", "llm")
        gold = grade.gold_text(q.answer, q.aliases, q.false_premise if q.expected == "reject_premise" else None)
        verdict = ask_grader(self.llm, grade.build(q.question, gold, prediction.text or ""))
        if verdict is None:
            return Graded("unparsed", None, "llm")
        return Graded("graded", verdict.grade, "llm")
