"""`newskg eval irb`: IRB factuality benchmarks generated from our own graph (issue 15).

This module owns the `irb` group and `generate`; the evaluation (`run`) is irb_run.py's, added here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.progress import Progress

from newskg.cli import irb_run
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.errors import NewskgError
from newskg.core.settings import get_settings
from newskg.wiring import Wiring

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from newskg.evaluation.irb.records import IRBQuestion

app = typer.Typer(help="IRB: robust factuality questions generated from the graph, and their evaluation.")


@app.command("generate")
def generate_questions(
    as_of: str = typer.Option(..., "--as-of", help="The day (YYYY-MM-DD): only what was visible then is used."),
    source: str = typer.Option("news", "--source", help="news | neoqa (the synthetic NeoQA stream)."),
    n: int = typer.Option(50, "--n", min=1, help="Questions to write (fewer when the graph holds fewer)."),
    seed: int = typer.Option(0, "--seed", help="Order and perturbations: the same seed writes the same bytes."),
    out: Path = typer.Option(..., "--out", dir_okay=False, help="Where to write the questions (JSONL)."),
    use_llm: bool = typer.Option(
        True, "--llm/--no-llm", help="Let the configured LLM reword the questions (kept only if re-checks pass)."
    ),
    as_json: bool = JsonOption,
) -> None:
    """Single-hop, 2-hop and false-premise questions with their keypoints and qrels, from the graph as of a day;
    every answer is unique by a Cypher count, every false premise confirmed false by the graph."""
    from newskg.evaluation.irb.generate import SOURCES, generate, save
    from newskg.graph.store.asof import AsOf

    if source not in SOURCES:
        fail(f"--source must be one of {', '.join(SOURCES)}, not {source!r}")
    try:
        day = AsOf.of(as_of)
    except (ValueError, TypeError) as exc:
        fail(f"--as-of {as_of!r} is not a date (YYYY-MM-DD): {exc}")
    try:
        with Wiring(get_settings()) as wiring:
            store = wiring.store()
            llm = wiring.llm() if use_llm else None
            with Progress(console=console, transient=True, disable=as_json) as progress:
                task = progress.add_task("questions", total=n)
                made = generate(store, day, source, n, seed, llm, lambda: progress.advance(task))
    except NewskgError as exc:
        fail(str(exc))
    if not made.questions:
        fail(
            f"no question generated as of {day.iso} from source {source!r} "
            f"({made.facts} fact(s), rejected: {dict(made.rejected) or 'none'})"
        )
    save(made.questions, out)
    emit(
        {
            "as_of": day.iso,
            "source": source,
            "seed": seed,
            "facts": made.facts,
            "claims": made.claims,
            "maskable": made.maskable,
            "two_hop_chains": made.two_hop_chains,
            "questions": len(made.questions),
            "by_kind": _by_kind(made.questions),
            "llm_worded": sum(q.wording == "llm" for q in made.questions),
            "rejected": dict(sorted(made.rejected.items())),
            "out": str(out),
        },
        as_json,
        _render,
    )


def _by_kind(questions: list[IRBQuestion]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for q in questions:
        key = f"{q.hops}-hop/{q.premise}/{q.paraphrase}"
        counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items()))


def _render(r: dict[str, Any]) -> None:
    console.print(
        f"{r['questions']} question(s) as of {r['as_of']} ({r['source']}, seed {r['seed']}) from {r['facts']} "
        f"fact(s), {r['claims']} claim(s), {r['maskable']} maskable, {r['two_hop_chains']} 2-hop chain(s); "
        f"{r['llm_worded']} reworded by the LLM; written to {r['out']}"
    )
    console.print(f"by kind: {r['by_kind']}")
    console.print(f"rejected: {r['rejected'] or 'none'}")


app.add_typer(irb_run.app)  # eval irb run
