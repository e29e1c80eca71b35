"""`newskg eval entities --gold FILE`: mention precision/recall/F1 by type, type and linking accuracy of the
extract stage's entity code on an annotated gold set, for the plain spaCy model and each entity rule added in
turn (evaluation/entities/)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import Progress
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.errors import NewskgError
from newskg.core.settings import get_settings
from newskg.evaluation.entities.gold import DEFAULT_GOLD

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from newskg.evaluation.entities.report import EntityReport


app = typer.Typer()  # eval entities, added to the `eval` group by app.py


@app.command("entities")
def eval_entities(
    gold: Path = typer.Option(DEFAULT_GOLD, "--gold", dir_okay=False, help="Gold JSONL (tests/fixtures/entities/)."),
    out: Path | None = typer.Option(
        None, "--out", file_okay=False, help="Report folder (default: <data dir>/eval/entities-<gold file>)."
    ),
    split: str = typer.Option(
        "all",
        "--split",
        help="Which documents: all, dev (even positions by sorted id: tune rules on these) or test (odd: held out).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Exact-span P/R/F1 per type (and lenient overlap), type accuracy and linking accuracy: the spaCy model
    alone, the linker with no rule, then each rule of EntityRules switched on cumulatively."""
    from newskg.evaluation.entities.gold import load_gold, split_documents
    from newskg.evaluation.entities.report import build_report, write_report
    from newskg.evaluation.entities.run import configurations, evaluate

    try:
        documents = split_documents(load_gold(gold), split)
    except NewskgError as exc:
        fail(str(exc))
    with Progress(console=console, transient=True, disable=as_json) as progress:
        task = progress.add_task(f"{len(documents)} documents", total=len(configurations()))
        results = list(evaluate(documents, on_done=lambda _: progress.advance(task)))
    report = build_report(gold, documents, results, split)
    suffix = "" if split == "all" else f"-{split}"
    paths = write_report(report, out or get_settings().data_dir / "eval" / f"entities-{gold.stem}{suffix}")
    data = {"report": report.model_dump(exclude={"errors"}), "files": {k: str(v) for k, v in paths.items()}}
    emit(data, as_json, lambda _: _render(report, paths))


def _render(report: EntityReport, paths: dict[str, Path]) -> None:
    from newskg.evaluation.entities.report import COLUMNS, TYPE_COLUMNS, by_type, row

    table = Table(
        title=f"entities ({report.split}): {report.documents} documents, {report.gold_mentions} gold mentions"
    )
    for column in COLUMNS:
        table.add_column(column, justify="left" if column == "configuration" else "right", no_wrap=True)
    for configuration in report.configurations:
        table.add_row(*row(configuration))
    console.print(table)
    for configuration in (report.configurations[0], report.configurations[-1]):
        per_type = Table(title=f"by type: {configuration.name}")
        for column in TYPE_COLUMNS:
            per_type.add_column(column, justify="left" if column == "type" else "right")
        for cells in by_type(configuration):
            per_type.add_row(*cells)
        console.print(per_type)
    console.print(f"report: {paths['html']}")
