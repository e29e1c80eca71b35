"""The `newskg` command: one group per stage of the flow."""

from __future__ import annotations

import logging

import typer

from core.settings import get_settings
from newskg.cli import services

app = typer.Typer(
    name="newskg",
    help="Streaming news ingestion into a temporal entity-interaction graph, with temporal QA and evaluation.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


def _group(name: str, help_text: str) -> typer.Typer:
    group = typer.Typer(help=help_text, no_args_is_help=True)
    app.add_typer(group, name=name)
    return group


app.add_typer(services.app, name="services")
ingest_app = _group("ingest", "Produce articles into Kafka: files, feeds, the synthetic stream.")
run_app = _group("run", "Run the consumer stages (process, extract, all).")
extract_app = _group("extract", "Entity linking and open-IE on a text, LLM usage stats.")
graph_app = _group("graph", "The Cypher store and its Qdrant mirror: init, stats, reconcile, timelines.")
eval_app = _group("eval", "Evaluation: the NeoQA benchmark off the graph.")


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")) -> None:
    level = "DEBUG" if verbose else get_settings().log_level
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # kafka-python logs every refused connection while a broker starts; our own messages say what matters.
    logging.getLogger("kafka").setLevel(logging.DEBUG if verbose else logging.CRITICAL)
    logging.getLogger("httpx").setLevel(logging.DEBUG if verbose else logging.WARNING)


def _register() -> None:
    # Imported here so each command module can import `app` objects above without a cycle.
    from newskg.cli import (  # noqa: F401
        entities,
        extract,
        fanoutqa,
        graph,
        ingest,
        irb,
        irb_run,
        neon,
        neoqa,
        qa,
        run,
        topics,
    )


_register()
