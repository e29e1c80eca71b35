"""`newskg eval neoqa`: the NeoQA multiple-choice benchmark (evaluation/neoqa/run.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from newskg.cli.evaluate import evaluate
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.extras import MissingExtra, require

app = typer.Typer()  # eval neoqa, added to the `eval` group by app.py

ANSWERERS = ("evidence", "graph", "llm")
SETS = ("main", "ablation", "all")


@app.command("neoqa")
def eval_neoqa(
    instances: Path = typer.Option(
        ...,
        "--instances",
        exists=True,
        dir_okay=False,
        help="instances.jsonl (ours or the public release); articles are read from "
        "the same folder unless --data says otherwise.",
    ),
    answerer: str = typer.Option("evidence", "--answerer", help="evidence | graph | llm"),
    data_dir: Path | None = typer.Option(None, "--data", help="Folder holding articles.jsonl (or news.jsonl)."),
    instance_set: str = typer.Option("main", "--set", help="main | ablation | all"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="A seeded random sample of this many instances."),
    out: Path | None = typer.Option(None, "--out", help="Report folder (default: <data dir>/eval/neoqa-<answerer>)."),
    max_documents: int = typer.Option(4, "--max-docs", min=1, help="llm: articles shown per question."),
    max_chars: int = typer.Option(3000, "--max-chars", min=200, help="llm: characters of evidence per question."),
    as_json: bool = JsonOption,
) -> None:
    """Multiple-choice NeoQA: accuracy per category, parse rate, ADTScore; JSON + HTML report with plots."""
    try:
        require("matplotlib", "eval", "the evaluation report's plots")
    except MissingExtra as exc:
        fail(str(exc))
    from newskg.evaluation.neoqa.run import NeoQAConfig, run

    if answerer not in ANSWERERS:
        fail(f"--answerer must be one of {', '.join(ANSWERERS)}, not {answerer!r}")
    if instance_set not in SETS:
        fail(f"--set must be one of {', '.join(SETS)}, not {instance_set!r}")
    config = NeoQAConfig.model_validate(
        {
            "instances": instances,
            "answerer": answerer,
            "data": data_dir,
            "instance_set": instance_set,
            "limit": limit,
            "out": out,
            "max_documents": max_documents,
            "max_chars": max_chars,
        }
    )
    report = evaluate(lambda wiring, progress: run(config, wiring, progress), as_json)
    emit(report.model_dump(by_alias=True), as_json, _render)


def _render(r: dict[str, Any]) -> None:
    table = Table(title=f"NeoQA ({r['answerer']} answerer, set {r['set']}); random = 14.3")
    for column in (
        "set",
        "n",
        "ADTScore",
        "acc ans.",
        "acc unans.",
        "parsed %",
        "MH ans",
        "TS ans",
        "MH unans",
        "TS unans",
        "FP",
        "US",
    ):
        table.add_column(column, justify="right")
    for name, s in [("all", r["summary"]), *r["by_set"].items()]:
        cells = [f"{c['accuracy']:.1f}" if c["accuracy"] is not None else "-" for c in s["columns"]]
        table.add_row(
            name,
            str(s["instances"]),
            f"{s['adt_score']:.1f}",
            f"{s['acc_answerable']:.1f}",
            f"{s['acc_unanswerable']:.1f}",
            f"{s['parse_rate']:.1f}",
            *cells,
        )
    console.print(table)
    console.print(f"report: {r['report']['html']}")
