"""One IRB evaluation run: every question through each retriever (nDCG@5, max-passage) and each answering
setting (closed-book; RAG over each retriever's top-5 passages), every answer graded. The summary tables are in
evaluation/irb/report.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ValidationError

from core.errors import NewskgError
from evaluation.irb.answer import Answerer, Grader, GraderName, Prediction
from evaluation.irb.prompts.grade import Grade
from evaluation.irb.records import IRBQuestion
from evaluation.irb.retrieval import K, Rankers, RetrieverName, ndcg_at_k
from graph.store.asof import AsOf

AnswererName = Literal["closed-book", "rag"]
ANSWERERS: tuple[AnswererName, ...] = get_args(AnswererName)
CLOSED_BOOK = "closed-book"
POPULARITY_BUCKETS = ((1, 2, "1-2"), (3, 9, "3-9"), (10, None, "10+"))  # mentions as of the day


class IRBFileError(NewskgError, ValueError):
    """An IRB questions file that is missing or not a JSONL of IRB questions."""


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


def popularity_bucket(mentions: int) -> str:
    for low, high, label in POPULARITY_BUCKETS:
        if mentions >= low and (high is None or mentions <= high):
            return label
    return "0"


def load_questions(path: Path) -> list[IRBQuestion]:
    """The JSONL set; a missing file, an empty one or any malformed line is an IRBFileError naming the line."""
    if not path.is_file():
        raise IRBFileError(f"no IRB questions file at {path}", reason="missing_file")
    questions: list[IRBQuestion] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            questions.append(IRBQuestion.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(x) for x in first["loc"]) or "line"
            raise IRBFileError(
                f"{path}:{number}: not an IRB question ({where}: {first['msg']})", reason="malformed"
            ) from exc
    if not questions:
        raise IRBFileError(f"{path} holds no IRB questions", reason="empty_file")
    return questions


def settings_of(answerers: Sequence[AnswererName], retrievers: Sequence[RetrieverName]) -> list[str]:
    found: list[str] = []
    if "closed-book" in answerers:
        found.append(CLOSED_BOOK)
    if "rag" in answerers:
        found.extend(f"rag:{r}" for r in retrievers)
    return found


def _retrieval(
    documents: list[str], passages: list[str], doc_of: dict[str, str], qrels: dict[str, int]
) -> RetrievalOutcome:
    relevant = {d for d, rel in qrels.items() if rel > 0}
    in_context = {doc_of[c] for c in passages}
    return RetrievalOutcome(
        ndcg=round(ndcg_at_k(documents, qrels), 6),
        documents=documents,
        passages=passages,
        right=bool(relevant) and relevant <= in_context,
        any_relevant=bool(relevant & in_context),
    )


def _outcome(prediction: Prediction, graded_status: str, grade: Grade | None) -> AnswerOutcome:
    return AnswerOutcome(
        answer=prediction.text,
        answer_status=prediction.status,
        mode=prediction.mode,
        grade_status=graded_status,
        grade=grade,
    )


def evaluate_question(
    q: IRBQuestion,
    rankers: Rankers,
    retrievers: Sequence[RetrieverName],
    answerers: Sequence[AnswererName],
    answerer: Answerer,
    grader: Grader,
) -> QuestionResult:
    as_of = AsOf(q.as_of)
    retrieval: dict[str, RetrievalOutcome] = {}
    answers: dict[str, AnswerOutcome] = {}
    for name in retrievers:
        ranked = rankers.search(name, q.question, as_of)
        doc_of = {p.chunk_id: p.article_id for p in ranked.passages}
        retrieval[name] = _retrieval(ranked.documents, [p.chunk_id for p in ranked.passages], doc_of, q.qrels)
        if "rag" in answerers:
            prediction = answerer.rag(q, ranked.passages)
            graded = grader.grade(q, prediction)
            answers[f"rag:{name}"] = _outcome(prediction, graded.status, graded.grade)
    if "closed-book" in answerers:
        prediction = answerer.closed_book(q)
        graded = grader.grade(q, prediction)
        answers[CLOSED_BOOK] = _outcome(prediction, graded.status, graded.grade)
    return QuestionResult(
        id=q.id,
        question=q.question,
        as_of=q.as_of,
        expected=q.expected,
        hops=q.hops,
        premise=q.premise,
        paraphrase=q.paraphrase,
        popularity=q.popularity,
        popularity_bucket=popularity_bucket(q.popularity),
        qrels=q.qrels,
        retrieval=retrieval,
        answers=answers,
    )


def evaluate(
    questions: Sequence[IRBQuestion],
    rankers: Rankers,
    retrievers: Sequence[RetrieverName],
    answerers: Sequence[AnswererName],
    answerer: Answerer,
    grader: Grader,
    source: str = "",
    on_done: Callable[[], None] | None = None,
) -> IRBRun:
    results: list[QuestionResult] = []
    for q in questions:
        results.append(evaluate_question(q, rankers, retrievers, answerers, answerer, grader))
        if on_done:
            on_done()
    return IRBRun(
        questions_file=source,
        grader=grader.name,
        answer_mode="llm" if answerer.llm else "offline",
        retrievers=list(retrievers),
        settings=settings_of(answerers, retrievers),
        results=results,
    )
