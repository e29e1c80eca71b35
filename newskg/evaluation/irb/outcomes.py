"""What one IRB evaluation run produced (evaluation/irb/run.py makes it, evaluation/irb/report.py reads it): per
question, each retriever's outcome and each setting's graded answer; the run's record around them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from newskg.evaluation.irb.answer import GraderName
from newskg.evaluation.irb.prompts.grade import Grade
from newskg.evaluation.irb.retrieval import K

CLOSED_BOOK = "closed-book"


class RetrievalOutcome(BaseModel):
    ndcg: float
    documents: list[str]  # the top-k articles, by best passage
    passages: list[str]  # the top-k chunks: the RAG context
    right: bool  # every relevant document has a passage in the context (the paper's "correct retrieval")
    any_relevant: bool  # at least one has


class AnswerOutcome(BaseModel):
    answer: str | None
    answer_status: str
    mode: str
    grade_status: str
    grade: Grade | None


class QuestionResult(BaseModel):
    id: str
    question: str
    as_of: int
    expected: str
    hops: int
    premise: str
    paraphrase: str
    popularity: int
    popularity_bucket: str
    qrels: dict[str, int]
    retrieval: dict[str, RetrievalOutcome]
    answers: dict[str, AnswerOutcome]  # setting ("closed-book", "rag:bm25", ...) → graded answer


class IRBRun(BaseModel):
    questions_file: str
    grader: GraderName
    answer_mode: Literal["llm", "offline"]
    retrievers: list[str]
    settings: list[str]
    k: int = K
    results: list[QuestionResult]
