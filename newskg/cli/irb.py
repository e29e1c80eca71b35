"""`newskg eval irb`: IRB benchmarks generated from the graph and evaluated on it (the commands join this group
from their own modules)."""

from __future__ import annotations

import typer

from newskg.cli.app import eval_app

irb_app = typer.Typer(help="IRB: factuality benchmarks generated from the graph; retrieval and answer grades.")
eval_app.add_typer(irb_app, name="irb")
