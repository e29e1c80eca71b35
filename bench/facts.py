"""Fact precision with recall beside it, in one run:

1. `newskg eval facts` (evaluation/facts): the precision of a seeded sample of the offline (M0) facts on the 91 real
   pages, the 15 fresh ones and the synthetic stream, against the stored labels (bench/data/fact_labels.jsonl),
   with its 95% interval, and PERSON / ORG mention precision on the same pages;
2. the entity gold set (bench/entities.py): mention precision and recall per type, and M0 chunks/s;
3. replay recall@10 (bench/replay.py) on every question set, NewsRAG and NEON(M0), through the real pipeline
   (`--skip-replay` leaves it out: it starts the local servers and takes a few minutes).

Run: `.venv/bin/python -m bench.facts [--json] [--skip-replay]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.entities import m0_figures, quality_figures
from bench.figures import Figure, emit, figure
from bench.ingest import BUNDLED_PAGES
from newskg.core.settings import Settings
from newskg.evaluation.entities.gold import DEFAULT_GOLD, load_gold
from newskg.evaluation.entities.run import evaluate
from newskg.evaluation.facts.corpus import SHARED_DATA
from newskg.evaluation.facts.run import FactsConfig, FactsReport, run

REPO = Path(__file__).resolve().parents[1]


def precision_figures(report: FactsReport) -> dict[str, Figure]:
    figures: dict[str, Figure] = {}
    slices = {"": report, **{f"_{corpus}": f for corpus, f in report.by_corpus.items()}}
    for suffix, f in slices.items():
        n = f"{f.facts_labelled}/{f.facts_sampled} labelled, 95% CI {f.fact_precision_ci}"
        figures[f"fact_precision{suffix}"] = figure(f.fact_precision or 0.0, f"share ({n})")
        figures[f"entity_precision_person{suffix}"] = figure(f.entity_precision_person or 0.0, "share")
        figures[f"entity_precision_org{suffix}"] = figure(f.entity_precision_org or 0.0, "share")
    for corpus, f in report.by_corpus.items():
        figures[f"facts_per_chunk_{corpus}"] = figure(f.facts_per_chunk, f"facts/chunk ({f.chunks} chunks)")
    return figures


def replay_figures(pages: Path) -> dict[str, Figure]:
    """recall@10 per method, strategy and question set, from bench/replay.py's own JSON."""
    with tempfile.TemporaryDirectory(prefix="newskg-facts-replay-") as folder:
        out = subprocess.run(
            [
                *(sys.executable, "-m", "bench.replay", "--skip-throughput", "--json", "--pages", str(pages)),
                *("--data-dir", str(Path(folder) / "data"), "--out", str(Path(folder) / "out")),
            ],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=True,
        )
    figures = json.loads(out.stdout)["figures"]
    return {name: f for name, f in figures.items() if name.startswith("recall@10")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure")
    parser.add_argument("--skip-replay", action="store_true", help="leave out replay recall (no servers)")
    parser.add_argument("--data", type=Path, default=SHARED_DATA, help="folder holding news-html[-fresh]/")
    args = parser.parse_args()
    settings = Settings(_env_file=None)  # pyright: ignore[reportCallIssue] - pydantic-settings' init
    figures = precision_figures(run(FactsConfig(data=args.data), settings))
    results = list(evaluate(load_gold(DEFAULT_GOLD)))
    figures |= {f"gold_{k}": v for k, v in quality_figures(results[-1].scores, results[0].scores).items()}
    figures |= m0_figures(BUNDLED_PAGES, None, None, 1)
    if not args.skip_replay:
        figures |= replay_figures(args.data / "news-html")
    if args.json:
        emit(figures, " ".join(["python -m bench.facts", *sys.argv[1:]]))
        return
    table = Table(title="fact precision, entity precision, M0 throughput and replay recall (one run)")
    for column in ("figure", "value", "unit"):
        table.add_column(column, justify="right" if column == "value" else "left")
    for name, f in figures.items():
        table.add_row(name, str(f["value"]), f["unit"])
    Console(width=140).print(table)


if __name__ == "__main__":
    main()
