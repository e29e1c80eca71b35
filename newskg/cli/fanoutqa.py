"""`newskg eval fanoutqa`: score any system's answers file on FanOutQA with the reference metrics.

A Typer group whose callback scores when no subcommand is named, so later commands (`eval fanoutqa generate`)
can join it without changing this one."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.progress import Progress
from rich.table import Table

from core.settings import get_settings
from newskg.cli.app import eval_app
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.wiring import Wiring

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


def _score(dev, given, judge: bool, only_answered: bool, answers_file: str, quiet: bool):
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
