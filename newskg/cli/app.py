"""The `newskg` command: one group per stage of the flow."""

from __future__ import annotations

import logging
import sys
from typing import Any

import typer
from rich.markup import escape

from newskg.cli import (
    entities,
    extract,
    facts,
    fanoutqa,
    graph,
    ingest,
    irb,
    neon,
    neoqa,
    qa,
    run,
    services,
    topics,
)
from newskg.cli.output import EXIT_BUDGET_SPENT, EXIT_UNREACHABLE, err_console
from newskg.core.failures import Failure, Server, classify
from newskg.core.settings import get_settings

__all__ = ["EXIT_BUDGET_SPENT", "EXIT_UNREACHABLE", "NewskgTyper", "app", "unreachable_server"]


class NewskgTyper(typer.Typer):
    """The `newskg` app: a server out of reach, or refusing the configured credentials, ends any command with one
    line naming it and exit code 1, not a traceback (the stages themselves wait an outage out:
    ingest/kafka/stage.py). Which errors those are is core/failures.py's call."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except Exception as exc:
            message = unreachable_server(exc)
            if message is None:
                raise
            err_console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True)
            sys.exit(EXIT_UNREACHABLE)


# What to check when a server is out of reach or refuses: (its address setting, its credentials setting).
_SETTINGS = {
    Server.BROKER: ("NEWSKG_KAFKA_BOOTSTRAP", "NEWSKG_KAFKA_BOOTSTRAP"),
    Server.GRAPH: ("NEWSKG_GRAPH_URI", "NEWSKG_GRAPH_USER / NEWSKG_GRAPH_PASSWORD"),
    Server.VECTOR: ("NEWSKG_QDRANT_URL", "NEWSKG_QDRANT_API_KEY"),
    Server.LLM: ("NEWSKG_LLM_BASE_URL", "NEWSKG_LLM_API_KEY / NEWSKG_LLM_MODEL"),
}


def unreachable_server(exc: BaseException) -> str | None:
    """The message for a server out of reach (an outage) or refusing the request for a reason no retry mends (a
    stop: credentials, a missing collection or model), naming it and its address; None for any other error."""
    verdict = classify(exc)
    if verdict.failure is Failure.POISON or verdict.server is None:
        return None  # not a server's doing (or no telling which server): the error shows as it is
    detail = f"{type(exc).__name__}: {str(exc).strip()}"
    where = _address(verdict.server)
    address_setting, credentials_setting = _SETTINGS[verdict.server]
    if verdict.failure is Failure.OUTAGE:
        return (
            f"{verdict.server.value} at {where} is out of reach ({detail}); start it (`newskg services up`) or check "
            f"{address_setting}"
        )
    return (
        f"{verdict.server.value} at {where} refused the request ({verdict.why}: {detail}); check {credentials_setting}"
    )


def _address(server: Server) -> str:
    """Where the configured (or locally started) server is, for the message; never raises."""
    from newskg import wiring

    settings = get_settings()
    try:
        if server is Server.BROKER:
            return wiring.kafka_bootstrap(settings)
        if server is Server.GRAPH:
            return wiring.graph_uri(settings)
        if server is Server.VECTOR:
            return settings.qdrant_url or f"{settings.qdrant_local_path} ({wiring.mirror_engine(settings)})"
        return wiring.llm_base_url(settings) or "(no address configured)"
    except Exception:
        configured = {
            Server.BROKER: settings.kafka_bootstrap,
            Server.GRAPH: settings.graph_uri,
            Server.VECTOR: settings.qdrant_url,
            Server.LLM: settings.llm_base_url,
        }[server]
        return configured or "(no address configured)"


app = NewskgTyper(
    name="newskg",
    help="Streaming news ingestion into a temporal entity-interaction graph, with temporal QA and evaluation.",
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)


# Each module owns its commands; this one only assembles them, in the order `--help` lists them.
app.add_typer(qa.app)  # ask, serve
app.add_typer(topics.app)  # topics
app.add_typer(services.app, name="services")
app.add_typer(ingest.app, name="ingest")
app.add_typer(run.app, name="run")
app.add_typer(extract.app, name="extract")
app.add_typer(graph.app, name="graph")

eval_app = typer.Typer(help="Evaluation: the NeoQA benchmark off the graph.", no_args_is_help=True)
for commands in (entities.app, facts.app, neon.app, neoqa.app):
    eval_app.add_typer(commands)
eval_app.add_typer(fanoutqa.app, name="fanoutqa")
eval_app.add_typer(irb.app, name="irb")
app.add_typer(eval_app, name="eval")


@app.callback()
def main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Debug logging.")) -> None:
    level = "DEBUG" if verbose else get_settings().log_level
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    # kafka-python logs every refused connection while a broker starts; our own messages say what matters.
    logging.getLogger("kafka").setLevel(logging.DEBUG if verbose else logging.CRITICAL)
    logging.getLogger("httpx").setLevel(logging.DEBUG if verbose else logging.WARNING)
