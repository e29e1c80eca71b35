"""`newskg eval facts`: the precision of the facts and entities the offline extractor states, on real and
synthetic pages, against labels read by a person (evaluation/facts/)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import Progress, TaskID
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.errors import NewskgError
from newskg.core.settings import get_settings
from newskg.core.variant import Variant

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from newskg.core.llm.client import LLMClient
    from newskg.evaluation.facts.run import FactsReport
    from newskg.wiring import Wiring


app = typer.Typer()  # eval facts, added to the `eval` group by app.py


@app.command("facts")
def eval_facts(
    corpus: list[str] = typer.Option(
        ["news", "fresh", "synthetic"], "--corpus", help="Page sets: news (91 real pages), fresh (15), synthetic."
    ),
    seed: int = typer.Option(27, "--seed", help="The sample's seed: the same seed draws the same facts."),
    labels: Path | None = typer.Option(None, "--labels", dir_okay=False, help="Label file (bench/data/...)."),
    data: Path | None = typer.Option(None, "--data", file_okay=False, help="Folder holding news-html[-fresh]/."),
    out: Path | None = typer.Option(
        None, "--out", file_okay=False, help="Report folder (default: <data dir>/eval/facts)."
    ),
    todo: Path | None = typer.Option(None, "--todo", dir_okay=False, help="Write the sampled, unlabelled items here."),
    m0_rules: str | None = typer.Option(
        None, "--m0-rules", help="strict | wide (default: NEWSKG_EXTRACT_M0_RULES): the rules the facts are made by."
    ),
    variant: str = typer.Option(
        "m0", "--variant", help="m0 (offline) or m1 (the LLM endpoint NEWSKG_LLM_BASE_URL or `services up --llm`)."
    ),
    max_chunks: int | None = typer.Option(
        None, "--max-chunks", min=1, help="Read only the first N chunks of each page set (an LLM is slow)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Precision (readable, true to the chunk, right subject) of a seeded sample of facts, with its 95% interval,
    per page set and per rule; PERSON and ORG mention precision; the unlabelled items listed for reading."""
    from newskg.evaluation.facts.corpus import Corpus
    from newskg.evaluation.facts.report import summary, write_report, write_todo
    from newskg.evaluation.facts.run import FactsConfig, run
    from newskg.wiring import Wiring

    try:
        corpora = [Corpus(c) for c in corpus]
    except ValueError:
        fail(f"--corpus takes news, fresh or synthetic, not {', '.join(corpus)}")
    try:
        chosen = Variant.parse(variant)
    except ValueError:
        chosen = None
    if chosen is None or chosen is Variant.M2:
        fail(f"--variant takes m0 or m1, not {variant!r}")
    config = FactsConfig(corpora=corpora, seed=seed, variant=chosen, max_chunks=max_chunks)
    config = config.model_copy(update={k: v for k, v in {"labels": labels, "data": data}.items() if v is not None})
    settings = get_settings()
    if m0_rules is not None:
        if m0_rules not in ("strict", "wide"):
            fail(f"--m0-rules takes strict or wide, not {m0_rules!r}")
        settings = settings.model_copy(update={"extract_m0_rules": m0_rules})
    try:
        with Progress(console=console, transient=True, disable=as_json) as progress:
            tasks: dict[Corpus, TaskID] = {}

            def advance(c: Corpus, done: int, total: int) -> None:
                tasks.setdefault(c, progress.add_task(f"{c}: chunks", total=total))
                progress.update(tasks[c], completed=done)

            with Wiring(settings) as wiring:
                report = run(config, settings, advance, _llm(wiring) if chosen.needs_llm else None)
    except (NewskgError, FileNotFoundError) as exc:
        fail(str(exc))
    paths = write_report(report, out or settings.data_dir / "eval" / "facts")
    unread = write_todo(report, todo) if todo else len(report.todo)
    data_out = {**summary(report), "files": {k: str(v) for k, v in paths.items()}}
    emit(data_out, as_json, lambda _: _render(report, paths, unread))


def _llm(wiring: Wiring) -> LLMClient:
    client = wiring.llm()
    if client is None:
        fail("--variant m1 needs an LLM endpoint: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
    return client


def _f(value: object) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _render(report: FactsReport, paths: dict[str, Path], unread: int) -> None:
    table = Table(title=f"fact precision (seed {report.seed})")
    for column in ("page set", "facts", "precision", "95% CI", "labelled/sampled", "PERSON", "ORG"):
        table.add_column(column, justify="left" if column == "page set" else "right")
    for corpus, f in report.by_corpus.items():
        ci = "—" if f.fact_precision_ci is None else f"{f.fact_precision_ci[0]:.2f}–{f.fact_precision_ci[1]:.2f}"
        table.add_row(
            str(corpus),
            str(f.facts),
            _f(f.fact_precision),
            ci,
            f"{f.facts_labelled}/{f.facts_sampled}",
            _f(f.entity_precision_person),
            _f(f.entity_precision_org),
        )
    console.print(table)
    if unread:
        console.print(f"{unread} sampled items have no label yet (--todo FILE lists them)")
    console.print(f"report: {paths['html']}")
