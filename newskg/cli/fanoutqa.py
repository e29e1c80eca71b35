"""`newskg eval fanoutqa`: score any system's answers file on FanOutQA with the reference metrics.

A Typer group whose callback scores when no subcommand is named, so later commands (`eval fanoutqa generate`)
can join it without changing this one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import Progress
from rich.table import Table

from core.errors import NewskgError
from core.settings import Settings, get_settings
from newskg.cli.app import eval_app
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.wiring import Wiring

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from evaluation.fanoutqa.answerers import Answerer
    from graph.mirror.base import VectorMirror

SPLITS = ("dev", "test")

fanoutqa_app = typer.Typer(help="FanOutQA: the reference metrics on the dev set.")
eval_app.add_typer(fanoutqa_app, name="fanoutqa")


@fanoutqa_app.callback(invoke_without_command=True)
def eval_fanoutqa(
    ctx: typer.Context,
    split: str = typer.Option("dev", "--split", help="dev (310 questions with answers) | test (725, answers hidden)."),
    answers: Path | None = typer.Option(
        None, "--answers", dir_okay=False, help='The leaderboard\'s answers file: a JSON list of {"id", "answer"}.'
    ),
    judge: bool = typer.Option(False, "--judge", help="Also grade with the LLM judge (A-F factuality rubric)."),
    only_answered: bool = typer.Option(
        False,
        "--only-answered",
        help="Score only the questions the file answers (default: every question, unanswered ones score 0).",
    ),
    out: Path | None = typer.Option(None, "--out", help="Report folder (default: <data dir>/eval/fanoutqa-<file>)."),
    answerer: str | None = typer.Option(
        None,
        "--answerer",
        help="Answer the questions here instead of reading --answers: graph | closed-book | evidence.",
    ),
    docs: Path | None = typer.Option(
        None, "--docs", file_okay=False, help="evidence: the folder of documents to ingest into a separate graph."
    ),
    questions_file: Path | None = typer.Option(
        None, "--questions", dir_okay=False, help="Generated questions (`eval fanoutqa generate`) instead of --split."
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="--answerer: only the first N questions."),
    k: int = typer.Option(5, "--k", min=1, help="--answerer graph|evidence: evidence per sub-question."),
    as_json: bool = JsonOption,
) -> None:
    """Loose/strict accuracy and ROUGE-1/2/L through the reference functions, optionally the LLM judge; the
    leaderboard's JSON plus report.json, report.html and PNG bars per metric and per number of hops."""
    if ctx.invoked_subcommand is not None:
        return
    from core.errors import NewskgError
    from evaluation.fanoutqa.dataset import check_ids, load_answers, load_dev, load_test
    from evaluation.fanoutqa.records import DevQuestion

    if split not in SPLITS:
        fail(f"--split must be dev or test, not {split!r}")
    if answerer is not None or questions_file is not None:
        _answer_and_score(answerer, answers, docs, questions_file, split, limit, k, judge, only_answered, out, as_json)
        return
    if answers is None:
        fail('--answers FILE is required (a JSON list of {"id": ..., "answer": ...})')
    if judge and split == "test":
        fail("--judge needs reference answers; the test split has none (use --split dev)")
    settings = get_settings()
    if judge:
        _require_llm(settings)
    try:
        given = load_answers(answers)
        questions = load_dev() if split == "dev" else load_test()
        check_ids(given, questions, split)
    except NewskgError as exc:
        fail(str(exc))
    if split == "test":
        _validated_test(len(given), len(questions), as_json)
        return
    dev = [q for q in questions if isinstance(q, DevQuestion)]
    folder = out or settings.data_dir / "eval" / f"fanoutqa-{answers.stem}"
    import openai

    try:
        result = _score(dev, given, judge, only_answered, str(answers), as_json)
    except NewskgError as exc:
        fail(str(exc))
    except openai.OpenAIError as exc:  # the LLM stayed unreachable through the client's retries
        fail(f"LLM judge failed: {exc}")
    from evaluation.fanoutqa.report import write_report

    paths = write_report(result, folder)
    emit(
        {
            "split": split,
            "answers": str(answers),
            "questions": result.questions,
            "scored": result.scored,
            "answered": result.answered,
            "unanswered": result.unanswered,
            "leaderboard": result.leaderboard.model_dump(),
            "judge": result.judge.model_dump() if result.judge else None,
            "by_hops": [b.model_dump() for b in result.by_hops],
            "notes": result.notes,
            "report": {k: str(v) for k, v in paths.items()},
        },
        as_json,
        _render,
    )


def _answer_and_score(
    answerer: str | None,
    answers: Path | None,
    docs: Path | None,
    questions_file: Path | None,
    split: str,
    limit: int | None,
    k: int,
    judge: bool,
    only_answered: bool,
    out: Path | None,
    as_json: bool,
) -> None:
    """`--answerer` (and/or `--questions`): answer the dev or generated questions here, keep every trace, score
    them with the same metrics, write answers.json next to the report."""
    import json

    from core.errors import NewskgError
    from evaluation.fanoutqa.answerers import ANSWERERS, DEV_AS_OF, answer_all
    from evaluation.fanoutqa.dataset import check_ids, load_answers, load_dev
    from evaluation.fanoutqa.generate import load_generated
    from evaluation.fanoutqa.records import DevQuestion
    from graph.store.asof import AsOf

    if answerer is not None and answerer not in ANSWERERS:
        fail(f"--answerer must be one of {', '.join(ANSWERERS)}, not {answerer!r}")
    if (answerer is None) == (answers is None):
        fail("give exactly one of --answerer NAME and --answers FILE")
    if answerer == "evidence" and docs is None:
        fail("--answerer evidence needs --docs DIR (the documents to answer from)")
    if split == "test" and questions_file is None:
        fail("--answerer needs reference answers to score against: use --split dev or --questions FILE")
    settings = get_settings()
    if judge or answerer == "closed-book":
        _require_llm(settings)
    try:
        questions: list[DevQuestion] = [*load_generated(questions_file)] if questions_file else load_dev()
    except (OSError, ValueError) as exc:
        fail(f"cannot read questions: {exc}")
    questions = questions[:limit] if limit else questions
    asked = [(q.id, q.question, AsOf.of(getattr(q, "as_of", DEV_AS_OF))) for q in questions]
    label = "generated" if questions_file else "dev"
    folder = out or settings.data_dir / "eval" / f"fanoutqa-{label}-{answerer or (answers and answers.stem)}"
    traces = []
    if answerer is not None:
        with (
            Wiring(_answering_settings(answerer, docs, settings)) as wiring,
            Progress(console=console, transient=True, disable=as_json) as progress,
        ):
            runner = _answerer(answerer, k, wiring)
            task = progress.add_task(f"answering ({answerer})", total=len(asked))
            given, traces = answer_all(runner, asked, on_done=lambda: progress.advance(task))
        folder.mkdir(parents=True, exist_ok=True)
        answers_path = folder / "answers.json"
        answers_path.write_text(json.dumps([a.model_dump() for a in given], indent=1, ensure_ascii=False))
    else:
        assert answers is not None
        answers_path = answers
        try:
            given = load_answers(answers)
            check_ids(given, questions, "dev")
        except NewskgError as exc:
            fail(str(exc))
    import openai

    try:
        result = _score(questions, given, judge, only_answered, str(answers_path), as_json)
    except NewskgError as exc:
        fail(str(exc))
    except openai.OpenAIError as exc:
        fail(f"LLM failed: {exc}")
    result = result.model_copy(
        update={"split": label, "traces": traces, "notes": result.notes + _run_notes(answerer, label)}
    )
    from evaluation.fanoutqa.report import write_report

    paths = write_report(result, folder)
    emit(
        {
            "split": label,
            "answerer": answerer,
            "answers": str(answers_path),
            "questions": result.questions,
            "scored": result.scored,
            "answered": result.answered,
            "unanswered": result.unanswered,
            "sub_questions": sum(len(t.steps) for t in traces),
            "leaderboard": result.leaderboard.model_dump(),
            "judge": result.judge.model_dump() if result.judge else None,
            "by_hops": [b.model_dump() for b in result.by_hops],
            "notes": result.notes,
            "report": {k: str(v) for k, v in paths.items()},
        },
        as_json,
        _render,
    )


def _answering_settings(name: str, docs: Path | None, settings: Settings) -> Settings:
    """The news graph's settings, or for `evidence` those of the --docs folder's own graph, built here."""
    if name != "evidence":
        return settings
    from evaluation.fanoutqa.answerers import DEV_AS_OF
    from evaluation.fanoutqa.docs import ingest_docs

    assert docs is not None
    with console.status(f"ingesting {docs} through the pipeline into its own graph"):
        try:
            return ingest_docs(settings, docs, DEV_AS_OF)
        except NewskgError as exc:
            fail(str(exc))


def _answerer(name: str, k: int, wiring: Wiring) -> Answerer:
    """The answerer, wired to its graph (the news graph, or the --docs folder's own) or to the LLM."""
    from evaluation.fanoutqa.answerers import ClosedBookAnswerer, GraphFanoutAnswerer
    from evaluation.fanoutqa.decompose import Decomposer

    client = wiring.llm()
    if name == "closed-book":
        if client is None:
            fail("--answerer closed-book needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
        return ClosedBookAnswerer(client)
    return GraphFanoutAnswerer(wiring.store(), _mirror_or_none(wiring), Decomposer(client), k=k, name=name)


def _mirror_or_none(wiring: Wiring) -> VectorMirror | None:
    """The embedded mirror is one process's (Qdrant Edge's WAL lock, local mode's folder lock): when another
    holds it, the graph alone answers, said out loud."""
    try:
        return wiring.mirror()
    except Exception as exc:  # NotConfigured for a held folder; a server's errors vary
        console.print(f"[yellow]mirror unavailable ({exc}); answering from the graph alone[/]")
        return None


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


def _validated_test(answered: int, total: int, as_json: bool) -> None:
    """The test split's answers are not public: nothing can be scored here; the file is checked (shape, ids) so
    it can be submitted to the leaderboard as it is."""
    emit(
        {
            "split": "test",
            "valid": True,
            "answered": answered,
            "questions": total,
            "scored": False,
            "reason": "the test split's answers are hidden; submit the file to the FanOutQA leaderboard",
        },
        as_json,
        lambda r: console.print(
            f"valid test answers file: {r['answered']} of {r['questions']} questions answered; not scored "
            f"({r['reason']})"
        ),
    )


def _score(dev, given, judge: bool, only_answered: bool, answers_file: str | None, quiet: bool):
    from evaluation.fanoutqa import reference
    from evaluation.fanoutqa.metrics import score

    with Wiring(get_settings()) as wiring, Progress(console=console, transient=True, disable=quiet) as progress:
        grader = _judge(wiring) if judge else None
        loading = progress.add_task("loading the reference normaliser (spaCy)", total=None)
        reference.warm_up()
        progress.remove_task(loading)
        scored = len(given) if only_answered else len(dev)
        scoring = progress.add_task("scoring (accuracy, ROUGE)", total=scored)
        judging = progress.add_task("LLM judge", total=len(given), visible=judge)
        return score(
            dev,
            given,
            judge=grader,
            only_answered=only_answered,
            on_question=lambda: progress.advance(scoring),
            on_judged=lambda: progress.advance(judging),
            answers_file=answers_file,
        )


def _require_llm(settings) -> None:
    """Before any work (and before importing the pipeline, which is slow): is there an LLM to judge with?"""
    from newskg.wiring import llm_base_url

    if not llm_base_url(settings):
        fail("--judge needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")


def _judge(wiring: Wiring):
    from evaluation.fanoutqa.judge import FactualityJudge

    settings = wiring.settings
    client = wiring.llm()
    if client is None:
        fail("--judge needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
    return FactualityJudge(client, workers=settings.llm_max_concurrency)


def _render(r: dict) -> None:
    board = r["leaderboard"]
    table = Table(title=f"FanOutQA {r['split']}: {r['answered']} of {r['scored']} answered")
    for column in ("loose", "strict", "ROUGE-1", "ROUGE-2", "ROUGE-L", "BLEURT", "judge"):
        table.add_column(column, justify="right")
    rouge = board["rouge"]
    table.add_row(
        f"{board['acc']['loose']:.3f}",
        f"{board['acc']['strict']:.3f}",
        f"{rouge['rouge1']['fscore']:.3f}",
        f"{rouge['rouge2']['fscore']:.3f}",
        f"{rouge['rougeL']['fscore']:.3f}",
        "n/a",
        "-" if board["gpt"] is None else f"{board['gpt']:.3f}",
    )
    console.print(table)
    if r["judge"]:
        j = r["judge"]
        console.print(f"judge: {j['graded']} graded, {j['unparsed']} unparsed, {j['unanswered']} unanswered")
    console.print(f"report: {r['report']['html']}")


@fanoutqa_app.command("generate")
def generate_questions(
    as_of: str = typer.Option(..., "--as-of", help="The day (YYYY-MM-DD): only what was visible then is used."),
    source: str = typer.Option("news", "--source", help="news | neoqa (the synthetic NeoQA stream)."),
    out: Path = typer.Option(..., "--out", dir_okay=False, help="Where to write the questions (JSON, dev shape)."),
    window_days: int = typer.Option(365, "--window-days", min=1, help="The window: this many days up to --as-of."),
    min_neighbours: int = typer.Option(5, "--min-neighbours", min=2, help="Neighbours a hub needs (fan-out)."),
    max_hubs: int = typer.Option(50, "--max-hubs", min=1, help="Hubs tried, most connected first."),
    as_json: bool = JsonOption,
) -> None:
    """FanOutQA-style questions from the graph as of a day: a hub, its interaction partners in the window, and the
    day of each interaction; questions one article answers, or whose answer is not unique, are rejected."""
    from evaluation.fanoutqa.generate import SOURCES, generate, save
    from graph.store.asof import AsOf
    from graph.store.store import GraphStore
    from newskg.wiring import open_graph

    if source not in SOURCES:
        fail(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
    try:
        day = AsOf.of(as_of)
    except (ValueError, TypeError) as exc:
        fail(f"--as-of {as_of!r} is not a date (YYYY-MM-DD): {exc}")
    store = GraphStore(open_graph(get_settings()))
    with Progress(console=console, transient=True, disable=as_json) as progress:
        task = progress.add_task("hubs", total=None)
        made = generate(store, day, source, window_days, min_neighbours, max_hubs, lambda: progress.advance(task))
    save(made.questions, out)
    emit(
        {
            "as_of": day.iso,
            "source": source,
            "hubs": made.hubs,
            "questions": len(made.questions),
            "rejected": dict(made.rejected),
            "out": str(out),
        },
        as_json,
        lambda r: console.print(
            f"{r['questions']} question(s) from {r['hubs']} hub(s) as of {r['as_of']} ({r['source']}); "
            f"rejected: {r['rejected'] or 'none'}; written to {r['out']}"
        ),
    )
