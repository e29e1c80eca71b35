"""`newskg topics`: topics, partitions, end offsets and lag per consumer group."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.settings import get_settings
from newskg.wiring import NotConfigured, kafka_options

app = typer.Typer()  # topics: a top-level command


def _render(data: dict[str, Any]) -> None:
    table = Table(title="Kafka topics")
    for column in ("topic", "partitions", "messages", "lag by group"):
        table.add_column(column, overflow="fold")
    for t in data["topics"]:
        lag = ", ".join(f"{g}={n}" for g, n in sorted(t["lag"].items())) or "-"
        table.add_row(t["name"], str(t["partitions"]), str(t["messages"]), lag)
    console.print(table)


@app.command()
def topics(
    as_json: bool = JsonOption,
    ensure: bool = typer.Option(False, "--ensure", help="Create the project's topics first if missing."),
    internal: bool = typer.Option(False, "--internal", help="Include the broker's internal topics."),
) -> None:
    """Topics, partitions, messages (sum of end offsets) and lag per consumer group."""
    from newskg.ingest.kafka.admin import TopicAdmin

    settings = get_settings()
    try:
        admin = TopicAdmin(kafka_options(settings))
    except NotConfigured as exc:
        fail(str(exc))
    try:
        if ensure:
            from newskg.pipeline import ensure_topics

            ensure_topics(settings)  # the stages' own: the two logs compacted, the linking log in one partition
        reports = admin.report(include_internal=internal)
    finally:
        admin.close()
    emit({"topics": [r.as_dict() for r in reports]}, as_json, _render)
