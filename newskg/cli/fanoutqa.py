"""`newskg eval fanoutqa`: score any system's answers file on FanOutQA with the reference metrics.

A Typer group whose callback scores when no subcommand is named, so later commands (`eval fanoutqa generate`)
can join it without changing this one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.progress import Progress
from rich.table import Table

from newskg.cli.evaluate import evaluate
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.settings import get_settings
from newskg.wiring import Wiring

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from newskg.evaluation.fanoutqa.run import FanoutRun

SPLITS = ("dev", "test")

app = typer.Typer(help="FanOutQA: the reference metrics on the dev set.")


@app.callback(invoke_without_command=True)
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
    from newskg.evaluation.fanoutqa.answerers import ANSWERERS
    from newskg.evaluation.fanoutqa.run import FanoutConfig, TestSplitCheck, run

    if split not in SPLITS:
        fail(f"--split must be dev or test, not {split!r}")
    if answerer is not None and answerer not in ANSWERERS:
        fail(f"--answerer must be one of {', '.join(ANSWERERS)}, not {answerer!r}")
    config = FanoutConfig.model_validate(
        {
            "split": split,
            "answers": answers,
            "answerer": answerer,
            "docs": docs,
            "questions": questions_file,
            "judge": judge,
            "only_answered": only_answered,
            "out": out,
            "limit": limit,
            "k": k,
        }
    )
    report = evaluate(lambda wiring, progress: run(config, wiring, progress), as_json)
    if isinstance(report, TestSplitCheck):
        emit(report.model_dump(), as_json, _render_test)
    else:
        emit(_summary(report), as_json, _render)


def _summary(scored: FanoutRun) -> dict[str, Any]:
    """What the command prints: the figures, and where the answers and the report are."""
    result, here = scored.result, scored.answered_here
    return {
        "split": result.split,
        **({"answerer": scored.answerer} if here else {}),
        "answers": str(scored.answers),
        "questions": result.questions,
        "scored": result.scored,
        "answered": result.answered,
        "unanswered": result.unanswered,
        **({"sub_questions": sum(len(t.steps) for t in result.traces)} if here else {}),
        "leaderboard": result.leaderboard.model_dump(),
        "judge": result.judge.model_dump() if result.judge else None,
        "by_hops": [b.model_dump() for b in result.by_hops],
        "notes": result.notes,
        "report": {k: str(v) for k, v in scored.files.items()},
    }


def _render_test(r: dict[str, Any]) -> None:
    console.print(
        f"valid test answers file: {r['answered']} of {r['questions']} questions answered; not scored ({r['reason']})"
    )


def _render(r: dict[str, Any]) -> None:
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


@app.command("generate")
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
    from newskg.evaluation.fanoutqa.generate import SOURCES, generate, save
    from newskg.graph.store.asof import AsOf

    if source not in SOURCES:
        fail(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
    try:
        day = AsOf.of(as_of)
    except (ValueError, TypeError) as exc:
        fail(f"--as-of {as_of!r} is not a date (YYYY-MM-DD): {exc}")
    with Wiring(get_settings()) as wiring, Progress(console=console, transient=True, disable=as_json) as progress:
        store = wiring.store(ensure_schema=False)
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
