"""Commands whose stages land in later issues: they exist so the CLI's shape is fixed, and say so plainly."""

from __future__ import annotations

from newskg.cli.app import app
from newskg.cli.output import fail


@app.command()
def ask(query: str) -> None:
    """Answer an entity-centric temporal query (QA issue)."""
    fail("`ask` is not built yet: the QA layer lands with the QA issue")


@app.command()
def serve() -> None:
    """Serve the always-current QA HTTP API (QA issue)."""
    fail("`serve` is not built yet: the HTTP API lands with the QA issue")
