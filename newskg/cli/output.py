"""One way to print results: a rich table for people, `--json` for machines, clear errors on stderr."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

# Exit codes of a command that did not finish its work (README "Exit codes"): 1 a server out of reach or refusing
# the credentials (one line naming it), 2 a usage error (`fail`), 3 the --max-llm-calls budget spent with work left.
EXIT_UNREACHABLE = 1
EXIT_BUDGET_SPENT = 3

# Piped output (CI logs, `| less`) gets 120 columns instead of rich's 80, so tables stay readable.
console = Console() if sys.stdout.isatty() else Console(width=120)
# stderr carries lines only (errors, notices): never wrapped, whatever the terminal's width, since they name paths
# and values that scripts and tests grep for whole (tests/unit/test_cli_width.py).
err_console = Console(stderr=True, soft_wrap=True)

JsonOption = typer.Option(False, "--json", help="Print machine-readable JSON.")


def emit(data: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))
    else:
        render(data)


def fail(message: str, code: int = 2) -> NoReturn:
    # Not wrapped: an error names paths and values that scripts and tests grep for whole.
    # Escaped: a message quoting input ("[0:9]", "[bold]") is text, not rich markup.
    err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
    raise typer.Exit(code)
