"""One IRB evaluation run: every question through each retriever (nDCG@5, max-passage) and each answering
setting (closed-book; RAG over each retriever's top-5 passages), every answer graded (`evaluate`). `run(config,
clients)` does it on a questions file over the graph and writes the report (evaluation/irb/report.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, ValidationError

from newskg.core.errors import NewskgError
from newskg.evaluation.irb.answer import Answerer, Grader, Prediction
from newskg.evaluation.irb.outcomes import CLOSED_BOOK, AnswerOutcome, IRBRun, QuestionResult, RetrievalOutcome
from newskg.evaluation.irb.prompts.grade import Grade
from newskg.evaluation.irb.records import IRBQuestion
from newskg.evaluation.irb.report import IRBSummary, write_report
from newskg.evaluation.irb.retrieval import RETRIEVERS, Rankers, RetrieverName, load_passages, ndcg_at_k
from newskg.evaluation.kit.run import UNSEEN, Clients, Progress, Refused, refusing
from newskg.graph.store.asof import AsOf

AnswererName = Literal["closed-book", "rag"]
ANSWERERS: tuple[AnswererName, ...] = get_args(AnswererName)
POPULARITY_BUCKETS = ((1, 2, "1-2"), (3, 9, "3-9"), (10, None, "10+"))  # mentions as of the day


GraderChoice = Literal["auto", "llm", "deterministic"]
NEEDS_LLM = "--grader llm: no LLM configured (set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`)"


class IRBConfig(BaseModel):
    file: Path  # the IRB questions (JSONL, `eval irb generate`)
    out: Path  # report folder
    retrievers: list[RetrieverName] = list(RETRIEVERS)
    answerers: list[AnswererName] = list(ANSWERERS)
    grader: GraderChoice = "auto"  # auto: the LLM when one is configured
    limit: int | None = None  # only the first N questions
    use_llm: bool = True  # False: offline answers and the deterministic grader even with an LLM up


class IRBReport(BaseModel):
    summary: IRBSummary
    files: dict[str, str]


def run(config: IRBConfig, clients: Clients, progress: Progress = UNSEEN) -> IRBReport:
    """nDCG@5 (max-passage) per retriever as of each question's day, and closed-book / RAG answers graded
    CORRECT / INCORRECT / NOT_ATTEMPTED; offline, RAG answers extractively and closed-book gives no answer."""
    if not config.use_llm and config.grader == "llm":
        raise Refused("--grader llm and --no-llm contradict each other")
    with refusing(NewskgError):  # a bad questions file, a graph not configured
        questions = load_questions(config.file)[: config.limit]
        llm = clients.llm() if config.use_llm else None  # answers through the LLM when one is up, whoever grades
        if config.grader == "llm" and llm is None:
            raise Refused(NEEDS_LLM)
        rankers = _rankers(config, clients, progress)
        task = progress.task(f"evaluating {len(questions)} questions", total=len(questions))
        methods = Methods(
            rankers,
            [r for r in RETRIEVERS if r in config.retrievers],  # the canonical order
            [a for a in ANSWERERS if a in config.answerers],
            Answerer(llm),
            Grader(None if config.grader == "deterministic" else llm),
        )
        evaluated = evaluate(questions, methods, source=str(config.file), on_done=task.advance)
        summary, paths = write_report(evaluated, config.out, title=f"IRB — {config.file.name}")
    return IRBReport(summary=summary, files={k: str(v) for k, v in paths.items()})


def _rankers(config: IRBConfig, clients: Clients, progress: Progress) -> Rankers:
    """BM25 over the graph's passages, and the QA layer's retrieval (with the mirror for dense and hybrid)."""
    retriever = clients.retriever(with_mirror=any(r != "bm25" for r in config.retrievers))
    reading = progress.task("reading the graph's passages")
    passages = load_passages(retriever.store)
    reading.finish()
    return Rankers(passages, retriever)


class IRBFileError(NewskgError, ValueError):
    """An IRB questions file that is missing or not a JSONL of IRB questions."""


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


@dataclass(frozen=True)
class Methods:
    """What every question is put through: each retriever in `retrievers` (ranked by `rankers`), each answerer in
    `answerers` (RAG once per retriever, closed-book once), the answers made by `answerer` and graded by `grader`."""

    rankers: Rankers
    retrievers: Sequence[RetrieverName]
    answerers: Sequence[AnswererName]
    answerer: Answerer
    grader: Grader


def evaluate_question(q: IRBQuestion, methods: Methods) -> QuestionResult:
    rankers, answerer, grader = methods.rankers, methods.answerer, methods.grader
    as_of = AsOf(q.as_of)
    retrieval: dict[str, RetrievalOutcome] = {}
    answers: dict[str, AnswerOutcome] = {}
    for name in methods.retrievers:
        ranked = rankers.search(name, q.question, as_of)
        doc_of = {p.chunk_id: p.article_id for p in ranked.passages}
        retrieval[name] = _retrieval(ranked.documents, [p.chunk_id for p in ranked.passages], doc_of, q.qrels)
        if "rag" in methods.answerers:
            prediction = answerer.rag(q, ranked.passages)
            graded = grader.grade(q, prediction)
            answers[f"rag:{name}"] = _outcome(prediction, graded.status, graded.grade)
    if "closed-book" in methods.answerers:
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
    methods: Methods,
    source: str = "",
    on_done: Callable[[], None] | None = None,
) -> IRBRun:
    results: list[QuestionResult] = []
    for q in questions:
        results.append(evaluate_question(q, methods))
        if on_done:
            on_done()
    return IRBRun(
        questions_file=source,
        grader=methods.grader.name,
        answer_mode="llm" if methods.answerer.llm else "offline",
        retrievers=list(methods.retrievers),
        settings=settings_of(methods.answerers, methods.retrievers),
        results=results,
    )
