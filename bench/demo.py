"""Time to first answer on a bare machine: `make demo` from a fresh clone, its wall time and each part's.

Clones the repository's HEAD into a temporary folder (with `shared/` linked beside it, as CI lays it out), runs
`make demo` there with a clean environment (no PYTHONPATH, no NEWSKG_* settings) and pip's own cache (~/.cache/pip,
so "warm" means what earlier setups on this machine left there), then stops the demo's servers and removes the
folder. The figures: `demo_fresh_clone_s` (the goal: under 240 s on a 2-core machine with a warm package cache),
`demo_fresh_clone_cpu_s` (the CPU seconds it used: on a loaded machine, a steadier guide to the idle wall time
than the wall time itself), `setup_s` (make's setup steps, up to the demo's first step) and `demo_script_s`
(scripts/demo.sh), plus one `step_*_s` per `[time] NAME: N s` line that scripts/setup.sh and scripts/demo.sh
print, and the load average before and after (the machine may be shared). Only committed work is measured: the
clone has no local changes. Takes minutes: `make bench` runs it only when asked (`BENCH_FLAGS="--only demo"`).
Run: `.venv/bin/python -m bench.demo [--json] [--shared DIR] [--keep] [--log FILE]`.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from bench.figures import Figure, emit, figure

REPO = Path(__file__).resolve().parents[1]
GOAL_S = 240.0
# A part's wall time as scripts/setup.sh and scripts/demo.sh print it, and the demo's first step header.
TIMED = re.compile(r"^\[time\] (?P<name>[^:]+): (?P<seconds>\d+(?:\.\d+)?) s$")
DEMO_START = re.compile(r"^== 0\. ")
console = Console(stderr=True)


@dataclass
class Run:
    seconds: float
    returncode: int
    demo_started_s: float | None = None  # when scripts/demo.sh printed its first step
    cpu_s: float = 0.0  # user + system CPU of make demo and what it waited for: steadier than wall time under load
    parts: dict[str, float] = field(default_factory=dict)


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def clean_env() -> dict[str, str]:
    """The caller's environment less what would point the clone at another checkout, settings or make run."""
    dropped = {"PYTHONPATH", "VIRTUAL_ENV", "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "PIP_NO_CACHE_DIR"}
    return {k: v for k, v in os.environ.items() if k not in dropped and not k.startswith("NEWSKG_")}


def fresh_clone(workdir: Path, shared: Path | None) -> Path:
    checkout = workdir / "main"
    subprocess.run(["git", "clone", "-q", str(REPO), str(checkout)], check=True)
    if shared is not None:
        (workdir / "shared").symlink_to(shared)
    return checkout


def timed_make_demo(checkout: Path, log: Path, timeout_s: float) -> Run:
    """`make demo`, its output to `log` line by line with the seconds since the start; headers shown as it goes."""
    start, cpu_before = time.monotonic(), children_cpu_s()
    run = Run(seconds=0.0, returncode=-1)
    with (
        log.open("w") as out,
        subprocess.Popen(
            ["make", "demo"],
            cwd=checkout,
            env=clean_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # its own process group: a timeout stops make and everything it started
        ) as proc,
        console.status("make demo (fresh clone)") as status,
    ):
        assert proc.stdout is not None
        watchdog = threading.Timer(timeout_s, os.killpg, (proc.pid, signal.SIGTERM))
        watchdog.start()
        for line in proc.stdout:
            elapsed = time.monotonic() - start
            out.write(f"{elapsed:8.1f} {line}")
            line = line.rstrip("\n")
            if run.demo_started_s is None and DEMO_START.match(line):
                run.demo_started_s = elapsed
            if m := TIMED.match(line):
                run.parts[m["name"]] = float(m["seconds"])
                console.print(f"{elapsed:6.0f} s  {line}", markup=False)  # "[eval,local]" is not rich markup
            status.update(f"make demo (fresh clone): {elapsed:.0f} s, {escape(line[:80])}")
        run.returncode = proc.wait()
        watchdog.cancel()
    run.seconds, run.cpu_s = time.monotonic() - start, children_cpu_s() - cpu_before
    return run


def children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def stop_servers(checkout: Path) -> None:
    if (checkout / ".venv" / "bin" / "newskg").exists():
        subprocess.run(["make", "down"], cwd=checkout, env=clean_env(), capture_output=True, check=False)


def figures_of(run: Run, load_before: float, load_after: float) -> dict[str, Figure]:
    figures = {
        "demo_fresh_clone_s": figure(round(run.seconds, 1), "s"),
        "demo_fresh_clone_cpu_s": figure(round(run.cpu_s, 1), "s"),
    }
    if run.demo_started_s is not None:
        figures["setup_s"] = figure(round(run.demo_started_s, 1), "s")
        figures["demo_script_s"] = figure(round(run.seconds - run.demo_started_s, 1), "s")
    figures |= {f"step_{slug(name)}_s": figure(seconds, "s") for name, seconds in run.parts.items()}
    figures["load_1m_before"] = figure(round(load_before, 2), "load")
    figures["load_1m_after"] = figure(round(load_after, 2), "load")
    return figures


def default_shared() -> Path | None:
    beside = REPO.parent / "shared"
    return beside if beside.is_dir() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--shared", type=Path, default=default_shared(), help="linked as shared/ beside the clone")
    parser.add_argument("--keep", action="store_true", help="keep the clone (and its .venv) for a look")
    parser.add_argument("--log", type=Path, default=REPO / "bench" / "out" / "demo-fresh-clone.log")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds before make demo is stopped")
    args = parser.parse_args()

    args.log.parent.mkdir(parents=True, exist_ok=True)
    workdir = Path(tempfile.mkdtemp(prefix="newskg-demo-"))
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout
    console.print(f"cloning {REPO} ({head.strip()}) into {workdir}/main; output in {args.log}")
    load_before = os.getloadavg()[0]
    checkout = fresh_clone(workdir, args.shared)
    try:
        run = timed_make_demo(checkout, args.log, args.timeout)
    finally:
        stop_servers(checkout)
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    load_after = os.getloadavg()[0]
    verdict = "under" if run.seconds < GOAL_S else "over"
    console.print(
        f"make demo from a fresh clone: {run.seconds:.0f} s ({verdict} the {GOAL_S:.0f} s goal), "
        f"exit {run.returncode}, load average {load_before:.1f} before, {load_after:.1f} after"
    )
    if args.json:
        emit(figures_of(run, load_before, load_after), "python -m bench.demo --json")
    if run.returncode != 0:
        raise SystemExit(f"make demo failed (exit {run.returncode}): see {args.log}")


if __name__ == "__main__":
    main()
