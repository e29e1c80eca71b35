"""`eval fanoutqa` as a run: score a system's answers file with the reference metrics (and, asked, the LLM judge),
or first answer the dev or generated questions here (`graph`, `closed-book`, or `evidence` from a folder of
documents ingested into a graph of its own) and score those answers the same way. The test split's answers are
hidden: its file is only checked. Config and report are typed; the clients are borrowed (evaluation/kit/run.py)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from newskg.core.errors import NewskgError
from newskg.evaluation.fanoutqa.dataset import check_ids, load_answers, load_dev, load_test
from newskg.evaluation.fanoutqa.records import AnswerTrace, DevQuestion, FanoutReport, Split, SystemAnswer
from newskg.evaluation.kit.run import UNSEEN, Clients, Progress, Refused, mirror_or_none, refusing

if TYPE_CHECKING:  # the answerers load the QA layer, the judge the LLM client: only a run that needs them
    from newskg.evaluation.fanoutqa.answerers import Answerer
    from newskg.evaluation.fanoutqa.judge import FactualityJudge

AnswererName = Literal["graph", "closed-book", "evidence"]
NEEDS_LLM = "needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`"


class FanoutConfig(BaseModel):
    split: Split = "dev"  # dev: 310 questions with answers; test: 725, answers hidden
    answers: Path | None = None  # the leaderboard's answers file: a JSON list of {"id", "answer"}
    answerer: AnswererName | None = None  # answer the questions here instead of reading `answers`
    docs: Path | None = None  # evidence: the folder of documents to ingest into a separate graph
    questions: Path | None = None  # generated questions (`eval fanoutqa generate`) instead of the split
    judge: bool = False  # also grade with the LLM judge (A-F factuality rubric)
    only_answered: bool = False  # score only the answered questions (default: unanswered ones score 0)
    out: Path | None = None  # report folder (default: <data dir>/eval/fanoutqa-…)
    limit: int | None = None  # answering: only the first N questions
    k: int = 5  # answering from a graph: evidence per sub-question

    @property
    def answers_here(self) -> bool:
        """Answer (or read generated) questions here, rather than score a file against a split."""
        return self.answerer is not None or self.questions is not None


class TestSplitCheck(BaseModel):
    """The test split's answers are not public: nothing can be scored here; the file is checked (shape, ids) so
    it can be submitted to the leaderboard as it is."""

    split: Literal["test"] = "test"
    valid: bool = True
    answered: int
    questions: int
    scored: bool = False
    reason: str = "the test split's answers are hidden; submit the file to the FanOutQA leaderboard"


class FanoutRun(BaseModel):
    result: FanoutReport
    answers: Path  # the answers scored: the given file, or answers.json written next to the report
    answerer: AnswererName | None
    answered_here: bool
    files: dict[str, Path]


def run(config: FanoutConfig, clients: Clients, progress: Progress = UNSEEN) -> FanoutRun | TestSplitCheck:
    fanout = _Fanout(config, clients, progress)
    return fanout.answer_and_score() if config.answers_here else fanout.score_file()


@dataclass
class _Fanout:
    """One run: what every step reads (the config, the borrowed clients, where progress goes)."""

    config: FanoutConfig
    clients: Clients
    progress: Progress

    def score_file(self) -> FanoutRun | TestSplitCheck:
        """Loose/strict accuracy and ROUGE through the reference functions for a given answers file."""
        config = self.config
        answers = config.answers
        if answers is None:
            raise Refused('--answers FILE is required (a JSON list of {"id": ..., "answer": ...})')
        if config.judge and config.split == "test":
            raise Refused("--judge needs reference answers; the test split has none (use --split dev)")
        if config.judge:
            self.require_llm()
        with refusing(NewskgError):
            given = load_answers(answers)
            questions = load_dev() if config.split == "dev" else load_test()
            check_ids(given, questions, config.split)
        if config.split == "test":
            return TestSplitCheck(answered=len(given), questions=len(questions))
        dev = [q for q in questions if isinstance(q, DevQuestion)]
        result = self.score(dev, given, answers, failed="LLM judge failed: ")
        scored = FanoutRun(result=result, answers=answers, answerer=None, answered_here=False, files={})
        return self.written(scored, config.out or self.folder(answers.stem))

    def answer_and_score(self) -> FanoutRun:
        """Answer the dev or generated questions here, keep every trace, score them with the same metrics, write
        answers.json next to the report."""
        config = self.config
        self.check_answering()
        if config.judge or config.answerer == "closed-book":
            self.require_llm()
        questions = self.questions()
        label = "generated" if config.questions else "dev"
        folder = config.out or self.folder(f"{label}-{config.answerer or (config.answers and config.answers.stem)}")
        traces: list[AnswerTrace] = []
        if config.answerer is not None:
            given, traces = self.answer(questions)
            answers = _save_answers(given, folder)
        else:
            assert config.answers is not None  # check_answering: one of the two
            answers = config.answers
            with refusing(NewskgError):
                given = load_answers(answers)
                check_ids(given, questions, "dev")
        result = self.score(questions, given, answers, failed="LLM failed: ")
        notes = result.notes + _run_notes(config.answerer, label)
        result = result.model_copy(update={"split": label, "traces": traces, "notes": notes})
        scored = FanoutRun(result=result, answers=answers, answerer=config.answerer, answered_here=True, files={})
        return self.written(scored, folder)

    def folder(self, name: str) -> Path:
        return self.clients.settings.data_dir / "eval" / f"fanoutqa-{name}"

    def check_answering(self) -> None:
        config = self.config
        if (config.answerer is None) == (config.answers is None):
            raise Refused("give exactly one of --answerer NAME and --answers FILE")
        if config.answerer == "evidence" and config.docs is None:
            raise Refused("--answerer evidence needs --docs DIR (the documents to answer from)")
        if config.split == "test" and config.questions is None:
            raise Refused("--answerer needs reference answers to score against: use --split dev or --questions FILE")

    def require_llm(self) -> None:
        """Before any work (and before importing the pipeline, which is slow): is there an LLM to judge with?"""
        if not self.clients.has_llm():
            raise Refused(f"--judge {NEEDS_LLM}")

    def questions(self) -> list[DevQuestion]:
        from newskg.evaluation.fanoutqa.generate import load_generated

        path, limit = self.config.questions, self.config.limit
        with refusing(OSError, ValueError, prefix="cannot read questions: "):
            questions: list[DevQuestion] = [*load_generated(path)] if path else load_dev()
        return questions[:limit] if limit else questions

    def answer(self, questions: list[DevQuestion]) -> tuple[list[SystemAnswer], list[AnswerTrace]]:
        from newskg.evaluation.fanoutqa.answerers import DEV_AS_OF, answer_all
        from newskg.graph.store.asof import AsOf

        asked = [(q.id, q.question, AsOf.of(getattr(q, "as_of", DEV_AS_OF))) for q in questions]
        runner = self.answerer(self.answering_clients())
        task = self.progress.task(f"answering ({self.config.answerer})", total=len(asked))
        answered = answer_all(runner, asked, on_done=task.advance)
        task.finish()
        return answered

    def answering_clients(self) -> Clients:
        """The news graph's clients, or for `evidence` those of the --docs folder's own graph, built here."""
        if self.config.answerer != "evidence":
            return self.clients
        from newskg.evaluation.fanoutqa.answerers import DEV_AS_OF
        from newskg.evaluation.fanoutqa.docs import ingest_docs

        docs = self.config.docs
        assert docs is not None  # check_answering
        task = self.progress.task(f"ingesting {docs} through the pipeline into its own graph")
        with refusing(NewskgError):
            settings = ingest_docs(self.clients.settings, docs, DEV_AS_OF)
        task.finish()
        return self.clients.over(settings)

    def answerer(self, clients: Clients) -> Answerer:
        """The answerer, wired to its graph (the news graph, or the --docs folder's own) or to the LLM."""
        from newskg.evaluation.fanoutqa.answerers import ClosedBookAnswerer, FanoutSearch, GraphFanoutAnswerer
        from newskg.evaluation.fanoutqa.decompose import Decomposer

        name, client = self.config.answerer or "graph", clients.llm()
        if name == "closed-book":
            if client is None:
                raise Refused(f"--answerer closed-book {NEEDS_LLM}")
            return ClosedBookAnswerer(client)
        mirror = mirror_or_none(clients, self.progress)
        return GraphFanoutAnswerer(
            clients.store(), mirror, Decomposer(client), FanoutSearch(k=self.config.k), name=name
        )

    def score(
        self, questions: list[DevQuestion], given: list[SystemAnswer], answers: Path, failed: str
    ) -> FanoutReport:
        """The reference metrics (and the judge); an LLM out of reach through the client's retries says `failed`."""
        import openai

        with refusing(openai.OpenAIError, prefix=failed), refusing(NewskgError):
            return self.scored(questions, given, str(answers))

    def scored(self, questions: list[DevQuestion], given: list[SystemAnswer], answers_file: str) -> FanoutReport:
        from newskg.evaluation.fanoutqa import reference
        from newskg.evaluation.fanoutqa.metrics import score

        judge, only_answered = self.judge() if self.config.judge else None, self.config.only_answered
        loading = self.progress.task("loading the reference normaliser (spaCy)")
        reference.warm_up()
        loading.finish()
        scoring = self.progress.task("scoring (accuracy, ROUGE)", total=len(given if only_answered else questions))
        judging = self.progress.task("LLM judge", total=len(given)) if judge else None
        return score(
            questions,
            given,
            judge=judge,
            only_answered=only_answered,
            on_question=scoring.advance,
            on_judged=judging.advance if judging else None,
            answers_file=answers_file,
        )

    def judge(self) -> FactualityJudge:
        from newskg.evaluation.fanoutqa.judge import FactualityJudge

        client = self.clients.llm()
        if client is None:
            raise Refused(f"--judge {NEEDS_LLM}")
        return FactualityJudge(client, workers=self.clients.settings.llm_max_concurrency)

    def written(self, scored: FanoutRun, folder: Path) -> FanoutRun:
        """The run with its report written: report.json, report.html, the leaderboard's JSON and PNG bars."""
        from newskg.evaluation.fanoutqa.report import write_report

        return scored.model_copy(update={"files": write_report(scored.result, folder)})


def _save_answers(given: list[SystemAnswer], folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "answers.json"
    path.write_text(json.dumps([a.model_dump() for a in given], indent=1, ensure_ascii=False))
    return path


def _run_notes(answerer: str | None, label: str) -> list[str]:
    if label == "dev" and answerer in ("graph", "evidence"):
        where = "our news graph" if answerer == "graph" else "the --docs graph"
        return [
            f"Answered from {where} as of 2023-11-20 (FanOutQA's Wikipedia snapshot). The dev questions are about "
            "Wikipedia pages; that corpus cannot be downloaded on this machine, and the news graph does not hold "
            "those facts, so a low score over the news graph is expected: the run shows the harness and the path "
            "(decomposition, one as-of retrieval per sub-question, aggregation), not the system's accuracy. Give "
            "the open-book pages with --answerer evidence --docs DIR to answer from them."
        ]
    if label == "generated":
        return ["Questions generated from our graph as of each question's day (evaluation/fanoutqa/generate.py)."]
    return []
