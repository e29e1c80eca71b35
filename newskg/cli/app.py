"""The `newskg` command: one group per stage of the flow."""

from __future__ import annotations

import logging
import sys
from typing import Any

import typer

from core.settings import get_settings
from newskg.cli import services


class NewskgTyper(typer.Typer):
    """The `newskg` app: a server out of reach ends any command with one line naming it and exit code 1, not a
    traceback (the stages themselves wait an outage out: ingest/kafka/stage.py)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().__call__(*args, **kwargs)
        except Exception as exc:
            message = unreachable_server(exc)
            if message is None:
                raise
            from newskg.cli.output import err_console

            err_console.print(f"[bold red]error:[/] {message}")
            sys.exit(1)


def unreachable_server(exc: BaseException) -> str | None:
    """The message for a broker or graph server out of reach, naming it and its address; None for any other
    error."""
    from ingest.kafka.client import KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError

    settings = get_settings()
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (KafkaConnectionError, KafkaTimeoutError, NodeNotReadyError)):
        from newskg.wiring import kafka_bootstrap

        try:
            where = kafka_bootstrap(settings)
        except Exception:
            where = settings.kafka_bootstrap or "(no address configured)"
        return (
            f"the Kafka broker at {where} is out of reach ({detail}); start it (`newskg services up`) or check "
            "NEWSKG_KAFKA_BOOTSTRAP"
        )
    import redis.exceptions

    if isinstance(exc, redis.exceptions.ConnectionError):
        from newskg.wiring import graph_uri

        try:
            where = graph_uri(settings)
        except Exception:
            where = settings.graph_uri or "(no address configured)"
        return (
            f"the graph server at {where} is out of reach ({detail}); start it (`newskg services up`) or check "
            "NEWSKG_GRAPH_URI"
        )
    return None


app = NewskgTyper(
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
        facts,
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
