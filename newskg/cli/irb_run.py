"""`newskg eval irb run FILE`: retrieval nDCG@5 per retriever and graded closed-book / RAG answers on an IRB set,
with JSON + HTML + PNG reports."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from newskg.cli.evaluate import evaluate
from newskg.cli.output import JsonOption, console, emit, fail

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from newskg.evaluation.irb.report import IRBSummary

app = typer.Typer()  # eval irb run, added to the irb group by irb.py

GRADERS = ("auto", "llm", "deterministic")


def _names(value: str, allowed: tuple[str, ...], option: str) -> list[str]:
    names = [v.strip() for v in value.split(",") if v.strip()]
    unknown = [n for n in names if n not in allowed]
    if unknown or not names:
        fail(f"{option}: {', '.join(unknown) or 'nothing given'} — choose from {', '.join(allowed)}")
    return list(dict.fromkeys(names))


@app.command("run")
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
    from newskg.evaluation.irb.retrieval import RETRIEVERS
    from newskg.evaluation.irb.run import ANSWERERS, IRBConfig, run

    wanted, asked = _names(retrievers, RETRIEVERS, "--retrievers"), _names(answerer, ANSWERERS, "--answerer")
    if grader not in GRADERS:
        fail(f"--grader: {grader} — choose from {', '.join(GRADERS)}")
    config = IRBConfig.model_validate(
        {
            "file": file,
            "out": out,
            "retrievers": wanted,
            "answerers": asked,
            "grader": grader,
            "limit": limit,
            "use_llm": use_llm,
        }
    )
    report = evaluate(lambda wiring, progress: run(config, wiring, progress), as_json)
    emit(report.model_dump(), as_json, lambda _: _render(report.summary, report.files))


def _render(summary: IRBSummary, paths: dict[str, str]) -> None:
    from newskg.evaluation.irb.report import grader_label, tables

    console.print(f"{summary.questions} questions; grades by the {grader_label(summary)}")
    for name, (header, rows) in tables(summary).items():
        table = Table(title=name)
        for column in header:
            table.add_column(column)
        for row in rows:
            table.add_row(*row)
        console.print(table)
    console.print(f"report: {paths['html']}")
