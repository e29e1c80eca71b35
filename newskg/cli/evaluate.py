"""How a command runs an evaluation (`run(config, clients, progress) -> Report`, evaluation/kit/run.py): over a
bundle of clients that closes after it, its steps drawn as transient progress bars (none with --json), and a
refused run ending the command with its message and exit code 2, as every usage error does."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from newskg.cli.output import console, fail
from newskg.core.settings import get_settings
from newskg.wiring import NotConfigured, Wiring

R = TypeVar("R")


def evaluate(work: Callable[[Wiring, RunProgress], R], quiet: bool) -> R:
    """`work` (a run) over a bundle of the configured clients, its progress drawn unless `quiet` (--json)."""
    from newskg.evaluation.kit.run import Refused

    try:
        with Wiring(get_settings()) as wiring, RunProgress(quiet) as progress:
            return work(wiring, progress)
    except (Refused, NotConfigured) as exc:
        fail(str(exc))


class RunProgress:
    """Where an evaluation's run reports (evaluation/kit/run.py `Progress`): a transient bar per step on the
    console, none with --json; warnings in yellow. Use it as a context: the bars stop when the run ends."""

    def __init__(self, quiet: bool) -> None:
        self.bars = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=console,
            transient=True,
            disable=quiet,
        )

    def __enter__(self) -> RunProgress:
        self.bars.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.bars.stop()

    def task(self, description: str, total: int | None = None) -> Bar:
        return Bar(self.bars, self.bars.add_task(description, total=total))

    def warn(self, message: str) -> None:
        console.print(f"[yellow]{escape(message)}[/]")


class Bar:
    def __init__(self, bars: Progress, task: TaskID) -> None:
        self.bars, self.id = bars, task

    def advance(self) -> None:
        self.bars.advance(self.id)

    def finish(self) -> None:
        self.bars.remove_task(self.id)
