"""`newskg eval irb run FILE`: retrieval nDCG@5 per retriever and graded closed-book / RAG answers on an IRB set,
with JSON + HTML + PNG reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import Progress
from rich.table import Table

from core.errors import NewskgError
from core.settings import get_settings
from newskg.cli.irb import irb_app
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.wiring import Wiring

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from evaluation.irb.report import IRBSummary
    from evaluation.irb.retrieval import RetrieverName
    from evaluation.irb.run import AnswererName

GRADERS = ("auto", "llm", "deterministic")


def _names(value: str, allowed: tuple[str, ...], option: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        fail(f"{option}: {', '.join(unknown) or 'nothing given'} — choose from {', '.join(allowed)}")
    return list(dict.fromkeys(names))


@irb_app.command("run")
def irb_run(
    file: Path = typer.Argument(..., dir_okay=False, help="The IRB questions (JSONL, `eval irb generate`)."),
    retrievers: str = typer.Option("bm25,dense,hybrid", "--retrievers", help="Comma list: bm25, dense, hybrid."),
    answerer: str = typer.Option("closed-book,rag", "--answerer", help="Comma list: closed-book, rag."),
    grader: str = typer.Option(
        "auto", "--grader", help="auto (the LLM when one is configured) | llm | deterministic (no LLM)."
    ),
    out: Path = typer.Option(..., "--out", file_okay=False, help="Report folder."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Only the first N questions."),
    use_llm: bool = typer.Option(
        True, "--llm/--no-llm", help="--no-llm: offline answers and the deterministic grader even with an LLM up."
    ),
    as_json: bool = JsonOption,
) -> None:
    """nDCG@5 (max-passage) per retriever as of each question's day, and closed-book / RAG answers graded
    CORRECT / INCORRECT / NOT_ATTEMPTED; offline, RAG answers extractively and closed-book gives no answer."""
    from evaluation.irb.retrieval import RETRIEVERS
    from evaluation.irb.run import ANSWERERS

    wanted, asked = _names(retrievers, RETRIEVERS, "--retrievers"), _names(answerer, ANSWERERS, "--answerer")
    chosen: list[RetrieverName] = [r for r in RETRIEVERS if r in wanted]  # the canonical order, typed
    settings_to_run: list[AnswererName] = [a for a in ANSWERERS if a in asked]
    if grader not in GRADERS:
        fail(f"--grader: {grader} — choose from {', '.join(GRADERS)}")
    if not use_llm and grader == "llm":
        fail("--grader llm and --no-llm contradict each other")
    try:
        summary, paths = _run(file, chosen, settings_to_run, grader, out, limit, quiet=as_json, use_llm=use_llm)
    except NewskgError as exc:
        fail(str(exc))
    data = {"summary": summary.model_dump(), "files": {k: str(v) for k, v in paths.items()}}
    emit(data, as_json, lambda _: _render(summary, paths))


def _run(
    file: Path,
    retrievers: list[RetrieverName],
    answerers: list[AnswererName],
    grader_choice: str,
    out: Path,
    limit: int | None,
    quiet: bool,
    use_llm: bool = True,
) -> tuple[IRBSummary, dict[str, Path]]:
    from evaluation.irb.answer import Answerer, Grader
    from evaluation.irb.report import write_report
    from evaluation.irb.retrieval import Rankers, load_passages
    from evaluation.irb.run import evaluate, load_questions
    from qa.retrieve import Retriever

    questions = load_questions(file)[:limit]
    with Wiring(get_settings()) as wiring, Progress(console=console, transient=True, disable=quiet) as progress:
        llm = wiring.llm() if use_llm else None  # answers through the LLM when one is up, whatever grades them
        if grader_choice == "llm" and llm is None:
            fail("--grader llm: no LLM configured (set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`)")
        store = wiring.store()
        reading = progress.add_task("reading the graph's passages", total=None)
        passages = load_passages(store)
        progress.remove_task(reading)
        needs_mirror = any(r != "bm25" for r in retrievers)
        retriever = Retriever(store, wiring.mirror() if needs_mirror else None)
        task = progress.add_task(f"evaluating {len(questions)} questions", total=len(questions))
        run = evaluate(
            questions,
            Rankers(passages, retriever),
            retrievers,
            answerers,
            Answerer(llm),
            Grader(None if grader_choice == "deterministic" else llm),
            source=str(file),
            on_done=lambda: progress.advance(task),
        )
        return write_report(run, out, title=f"IRB — {file.name}")


def _render(summary: IRBSummary, paths: dict[str, Path]) -> None:
    from evaluation.irb.report import grader_label, tables

    console.print(f"{summary.questions} questions; grades by the {grader_label(summary)}")
    for name, (header, rows) in tables(summary).items():
        table = Table(title=name)
        for column in header:
            table.add_column(column)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(f"report: {paths['html']}")
