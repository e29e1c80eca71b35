"""`make bench`: every bench script with `--json`, one after the other, and bench/RESULTS.md from their figures.

Each bench runs as `python -m bench.NAME --json ARGS` in a subprocess; its last stdout line that parses as a JSON
object is its figures (bench/figures.py: {"figures": {NAME: {value, unit, baseline, ratio}}, machine, date,
command}). A bench that fails or prints no figures is listed as such in the file, never dropped. The sizes are
modest by default so the whole run fits a loaded 2-core machine; `--full` runs the full-size flags (the README's
figures) instead. The load average before and after each bench goes into the file: the machine is shared. An
optional bench (`demo`: `make demo` from a fresh clone, minutes long; `qa_1m`: the QA bench at 1 M interactions)
runs only when named with `--only`. Every outcome is also kept in bench/RESULTS.json: a run with `--only` rewrites
the named benches' sections and keeps every other one as the last run left it (each section carries its date).
Run: `make bench` or `.venv/bin/python -m bench.results [--only NAME ...] [--full] [--out bench/RESULTS.md]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from bench.figures import machine

REPO = Path(__file__).resolve().parents[1]
console = Console(stderr=True)


@dataclass(frozen=True)
class Bench:
    name: str
    modest: tuple[str, ...]  # what `make bench` runs
    full: tuple[str, ...]  # the full-size figures (documented, and run with --full)
    what: str
    optional: bool = False  # minutes long: run only when named (`--only NAME`), never by a plain `make bench`
    module: str = ""  # the bench script (bench/<module>.py) when it is not the name: one script, two sizes

    @property
    def script(self) -> str:
        return self.module or self.name


# bench/qa.py's flags but the sizes (after "--sizes"); the 1 M step is its own bench (`qa_1m`, optional: its graph
# takes minutes to load on 2 cores and its mirror of 1.2 M points minutes to index), with 10k again so its growth
# figures are of one run.
QA_FLAGS = (
    "--clients", "10", "--seconds", "15", "--single-seconds", "10", "--scan-clients", "4", "--scan-seconds", "10",
    "--profile", "50",
)  # fmt: skip

BENCHES = (
    Bench("broker", ("--messages", "5000"), ("--messages", "20000"), "local brokers: noida-db vs Tansu"),
    Bench(
        "ingest",
        ("--replay-signatures", "50000", "--memory-signatures", "100000"),
        ("--replay-signatures", "1000000", "--memory-signatures", "1500000"),
        "main text, process stage, MinHash, dedup (bundled pages; the README's: --pages of the 91)",
    ),
    Bench("extract", (), (), "M1/M2 LLM calls, M0 vs spaCy parse (bundled pages)"),
    Bench(
        "graph",
        ("--rows", "5000", "--per-row-rows", "300", "--mirror-rows", "500"),
        ("--rows", "20000", "--mirror-rows", "2000"),
        "graph writes with full provenance, batched (3 runs) vs per row, mirror upserts",
    ),
    Bench(
        "qa",
        ("--sizes", "10000,20000,100000", *QA_FLAGS),
        ("--sizes", "10000,20000,100000,1000000", *QA_FLAGS),
        "/v1/ask per answer (API CPU, one client, half-capacity p95, capacity) for temporal and hybrid at 10k, 20k "
        "(issue 30's capacity goal) and 100k interactions vs a brute-force scan, readiness, RSS, explorer reads",
    ),
    Bench(
        "embed",
        ("--sentences", "1000", "--repeats", "1"),
        ("--sentences", "1000", "--repeats", "3", "--all-pages", "--int8"),
        "MiniLM on ONNX Runtime vs sentence-transformers: speed, cosine, recall@10, RSS",
    ),
    Bench("determinism", (), (), "arrival order and two consumers vs one (bundled pages)"),
    Bench("fanout", ("--hubs", "10"), ("--hubs", "20"), "fan-out answering vs one retrieval"),
    Bench("entities", ("--repeat", "1"), ("--repeat", "3"), "entity quality on the gold set, M0 speed"),
    Bench(
        "facts",
        ("--skip-replay",),
        (),
        "fact and mention precision of M0 on the real, fresh and synthetic pages (labels in bench/data), with the "
        "entity gold set and M0 speed; full: replay recall in the same run",
    ),
    Bench(
        "replay",
        ("--skip-recall", "--rows", "10000", "--seconds", "5"),
        ("--rows", "100000", "--seconds", "20"),
        "NEON replay throughput (recall needs the 91 pages: full run)",
    ),
    Bench("irb", ("--interactions", "10000", "--n", "50"), ("--interactions", "100000", "--n", "200"), "IRB"),
    Bench(
        "soak",
        ("--short",),
        ("--minutes", "10"),
        "API under load while the pipeline ingests",
    ),
    Bench(
        "startup",
        ("--articles", "20", "--queries", "100", "--ask-runs", "1"),
        ("--articles", "100", "--queries", "100", "--ask-runs", "3"),
        "first query after /readyz vs the next 100, API and stage peak RSS, `newskg ask` start-up vs query",
    ),
    Bench(
        "pipeline",
        (),
        ("--real-pages",),
        "end-to-end stream vs spaCy + embedding bound, 2 processes vs 1, stage RSS (bundled pages; full: the 91)",
    ),
    Bench(
        "qa_1m",
        ("--sizes", "10000,1000000", "--strategies", "temporal,hybrid", *QA_FLAGS),
        (),
        "bench qa, temporal, hybrid and the explorer, at 10k and 1 M interactions in one run (growth: 1 M over 10k), "
        "`--only qa_1m`",
        optional=True,
        module="qa",
    ),
    Bench("demo", (), (), "`make demo` from a fresh clone, wall time and each step's", optional=True),
    Bench(
        "llm_parse",
        ("--prompts", "20"),
        ("--prompts", "60"),
        "LLM answers that parse: structured outputs vs JSON mode (local SmolLM2; needs `make setup-llm`)",
        optional=True,
    ),
)


def chosen(only: list[str] | None) -> list[Bench]:
    """The benches named, in BENCHES order; none named: every one but the optional ones."""
    if only is None:
        return [b for b in BENCHES if not b.optional]
    unknown = set(only) - {b.name for b in BENCHES}
    if unknown:
        raise SystemExit(f"unknown bench: {', '.join(sorted(unknown))} (known: {', '.join(b.name for b in BENCHES)})")
    return [b for b in BENCHES if b.name in only]


@dataclass
class Outcome:
    bench: Bench
    command: str
    seconds: float
    load_before: tuple[float, float, float]
    load_after: tuple[float, float, float]
    result: dict[str, Any] | None
    failure: str | None


def record(outcome: Outcome) -> dict[str, Any]:
    """An outcome as bench/RESULTS.json keeps it (all but the bench, which is its key)."""
    fields = asdict(outcome)
    del fields["bench"]
    return fields


def kept_outcomes(path: Path) -> dict[str, Outcome]:
    """The outcomes of an earlier run, by bench name (none when there is no readable file, or for a bench no
    longer defined)."""
    try:
        saved: dict[str, dict[str, Any]] = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    benches = {b.name: b for b in BENCHES}
    return {
        name: Outcome(
            benches[name],
            fields["command"],
            fields["seconds"],
            tuple(fields["load_before"]),
            tuple(fields["load_after"]),
            fields["result"],
            fields["failure"],
        )
        for name, fields in saved.items()
        if name in benches
    }


def merged(ran: list[Outcome], kept: dict[str, Outcome]) -> list[Outcome]:
    """This run's outcomes and, for every other bench, its kept one, in BENCHES order: `--only qa_1m` adds the 1 M
    step to the file `make bench` wrote instead of replacing it."""
    now = {o.bench.name: o for o in ran}
    return [now.get(b.name) or kept[b.name] for b in BENCHES if b.name in now or b.name in kept]


def last_json_object(stdout: str) -> dict[str, Any] | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict) and "figures" in value:
                return value
    return None


def run(bench: Bench, full: bool, timeout_s: float) -> Outcome:
    args = [*(bench.full if full else bench.modest), "--json"]
    command = " ".join(["python -m bench." + bench.script, *args])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    before, start = os.getloadavg(), time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, "-m", f"bench.{bench.script}", *args],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
        result = last_json_object(proc.stdout)
        failure = None
        last_error = (proc.stderr.strip().splitlines() or ["no output"])[-1][:300]
        if proc.returncode != 0:  # figures printed before a failure (a soak check that failed) are still shown
            failure = f"exit {proc.returncode}: {last_error}"
        elif result is None:
            failure = "printed no --json figures"
    except subprocess.TimeoutExpired:
        result, failure = None, f"timed out after {timeout_s:.0f} s"
    return Outcome(bench, command, time.monotonic() - start, before, os.getloadavg(), result, failure)


def number(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if abs(value) < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def load(values: tuple[float, float, float]) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


def markdown(outcomes: list[Outcome], full: bool, started: str) -> str:
    lines = [
        "# Bench results",
        "",
        "Written by `make bench` (`python -m bench.results"
        + (" --full" if full else "")
        + "`) from each bench script's `--json` figures; do not edit by hand. The baseline of each figure is"
        " measured in the same run; ratio = value / baseline.",
        "",
        f"- machine: {machine()}",
        f"- date: {started} (UTC); a section kept from an earlier run (`--only`) gives its own date under its heading",
        "- sizes: " + ("full" if full else "modest (make bench); the full-size flags are in the index's 4th column"),
        "- load average (1 / 5 / 15 min) before and after each bench is given per bench: the machine is shared by"
        " other work, so absolute rates are lower and noisier than on an idle machine; ratios within one bench"
        " run are the comparable figures.",
        "",
        "| bench | what | command | full size | seconds | load before | load after | status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        full_command = " ".join(["python -m bench." + o.bench.script, *o.bench.full]) if o.bench.full else "(same)"
        status = "ok" if o.failure is None else o.failure.replace("|", "\\|")
        lines.append(
            f"| {o.bench.name} | {o.bench.what} | `{o.command}` | `{full_command}` | {o.seconds:.0f} | "
            f"{load(o.load_before)} | {load(o.load_after)} | {status} |"
        )
    for o in outcomes:
        lines += ["", f"## {o.bench.name}", ""]
        if o.result is None:
            lines.append(f"No figures: {o.failure}.")
            continue
        lines += [
            f"`{o.result.get('command', o.command)}` — {o.result.get('date', '')}, {o.result.get('machine', '')}",
            "",
            "| figure | value | unit | baseline | ratio |",
            "|---|---:|---|---:|---:|",
        ]
        for name, f in o.result["figures"].items():
            lines.append(
                f"| `{name}` | {number(f.get('value'))} | {f.get('unit', '')} | {number(f.get('baseline'))} | "
                f"{number(f.get('ratio'))} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--only", nargs="*", default=None, help="bench names (default: every one but the optional: demo)"
    )
    parser.add_argument("--full", action="store_true", help="the full-size flags instead of the modest ones")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "RESULTS.md")
    parser.add_argument(
        "--json-out", type=Path, default=REPO / "bench" / "RESULTS.json", help="every outcome (--only keeps the rest)"
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per bench")
    args = parser.parse_args()
    benches = chosen(args.only)
    started = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    outcomes = []
    for i, bench in enumerate(benches, start=1):
        with console.status(f"[{i}/{len(benches)}] bench.{bench.name} {' '.join(bench.modest)}"):
            outcome = run(bench, args.full, args.timeout)
        outcomes.append(outcome)
        console.print(f"[{i}/{len(benches)}] {bench.name}: {outcome.failure or 'ok'} ({outcome.seconds:.0f} s)")
    if args.only is not None:  # the benches not named keep their last outcome
        outcomes = merged(outcomes, kept_outcomes(args.json_out))
    args.out.write_text(markdown(outcomes, args.full, started))
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps({o.bench.name: record(o) for o in outcomes}, indent=1) + "\n")
    console.print(f"wrote {args.out} and {args.json_out}")
    if any(o.failure for o in outcomes):
        sys.exit(1)


if __name__ == "__main__":
    main()
