"""`newskg run process|all`: the consumer stages, forever or `--until-idle`."""

from __future__ import annotations

import signal
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import typer
from rich.live import Live
from rich.table import Table

from newskg.cli.output import EXIT_BUDGET_SPENT, JsonOption, console, emit, err_console, fail
from newskg.core.settings import get_settings
from newskg.core.variant import Variant
from newskg.wiring import NotConfigured, Wiring

if TYPE_CHECKING:
    from newskg.ingest.kafka.stage import StageRunner

app = typer.Typer(help="Run the consumer stages (process, extract, all).", no_args_is_help=True)

UNTIL_IDLE = typer.Option(
    False,
    "--until-idle",
    help="Exit once the group has no lag (batch jobs, tests); exit 1 "
    "naming the group if no partitions come within "
    "NEWSKG_KAFKA_JOIN_TIMEOUT_S.",
)


def _table(runners: Sequence[StageRunner[Any]]) -> Table:
    table = Table(title="newskg stages")
    for column in ("stage", "consumed", "produced", "dead letters", "batches"):
        table.add_column(column)
    for r in runners:
        s = r.stats
        table.add_row(r.stage.name, str(s.consumed), str(s.produced), str(s.dead), str(s.batches))
    return table


def _run(
    names: list[str], until_idle: bool, as_json: bool, variant: Variant | None = None, max_calls: int | None = None
) -> None:
    from newskg.core.llm.client import BudgetExceeded
    from newskg.ingest.kafka.membership import GroupMembershipError
    from newskg.ingest.kafka.stage import run_stages
    from newskg.pipeline import build_runners

    settings = get_settings()
    budget_note, membership_error = None, None
    with Wiring(settings) as wiring:  # closes every consumer, producer and client once, also on failure
        try:
            runners = build_runners(wiring, names, variant, max_calls)
        except GroupMembershipError as exc:
            fail(str(exc), code=1)
        except (NotConfigured, ValueError) as exc:
            fail(str(exc))
        stop = threading.Event()

        def finish(*_: object) -> None:  # finish the batch in hand, commit, then exit
            stop.set()

        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, finish)
        join_timeout = settings.kafka_join_timeout_s
        try:
            if as_json:
                run_stages(runners, until_idle, stop, join_timeout)
            else:
                with Live(_table(runners), console=console, refresh_per_second=4) as live:
                    run_stages(runners, until_idle, stop, join_timeout, on_progress=lambda rs: live.update(_table(rs)))
        except GroupMembershipError as exc:  # no partitions in time, or fenced: the job did not do its work
            membership_error = str(exc)
        except BudgetExceeded as exc:
            # The batch in hand is not committed: the next run re-reads it (its answers so far are cached).
            budget_note = f"{exc}: stopped cleanly; the unfinished batch will be re-read by the next run"
            err_console.print(f"[yellow]{budget_note}[/]")
    if membership_error:
        fail(membership_error, code=1)
    stats = {r.stage.name: r.stats.__dict__ for r in runners}
    emit({"stages": stats, **({"stopped": budget_note} if budget_note else {})}, as_json, lambda _: None)
    if budget_note:
        # Work is left (the batch in hand at least): not the success a script would take a 0 for.
        raise typer.Exit(EXIT_BUDGET_SPENT)


@app.command("process")
def run_process(until_idle: bool = UNTIL_IDLE, as_json: bool = JsonOption) -> None:
    """Consumer group newskg-process: articles → main text, dates, sentences, chunks, dedup → chunks topic."""
    _run(["process"], until_idle, as_json)


VARIANT = typer.Option(
    None, "--variant", help="Open-IE variant: m0 (offline), m1 or m2 (LLM). Default: NEWSKG_EXTRACT_VARIANT."
)
MAX_CALLS = typer.Option(
    None,
    "--max-llm-calls",
    min=0,
    help="Stop cleanly after this many LLM calls; exit 3 when the budget stopped it with work left.",
)


@app.command("extract")
def run_extract(
    until_idle: bool = UNTIL_IDLE,
    variant: str | None = VARIANT,
    max_calls: int | None = MAX_CALLS,
    as_json: bool = JsonOption,
) -> None:
    """Consumer group newskg-extract: chunks → entities → interactions → graph store (commit after the write)."""
    _run(["extract"], until_idle, as_json, variant_option(variant), max_calls)


@app.command("all")
def run_all(
    until_idle: bool = UNTIL_IDLE,
    variant: str | None = VARIANT,
    max_calls: int | None = MAX_CALLS,
    as_json: bool = JsonOption,
) -> None:
    """Every stage in one process (the demo's way)."""
    chosen = variant_option(variant)
    from newskg.pipeline import STAGES

    _run(list(STAGES), until_idle, as_json, chosen, max_calls)


@app.command("forget")
def run_forget(
    instances: list[str] = typer.Argument(..., help="NEWSKG_INSTANCE_ID of each replica to remove."),
    as_json: bool = JsonOption,
) -> None:
    """Remove replicas that will not come back from the stage groups, so no rebalance waits for them. Needed on
    a broker that never expires a member (noida-db) after a scale-down or a renamed replica; Kafka expires them
    after the session timeout by itself."""
    from newskg.ingest.kafka.consumer import remove_static_members
    from newskg.ingest.kafka.membership import member_instance_id
    from newskg.pipeline import STAGES
    from newskg.wiring import kafka_options

    settings = get_settings()
    try:
        options = kafka_options(settings)
    except NotConfigured as exc:
        fail(str(exc))
    removed: list[dict[str, str]] = []
    absent: list[dict[str, str]] = []
    for stage in STAGES:
        group = settings.consumer_group(stage)
        outcome = remove_static_members(options, group, [member_instance_id(i, stage) for i in instances])
        for member, result in outcome.items():
            (removed if result == "removed" else absent).append(
                {"group": group, "member": member, **({} if result == "removed" else {"reason": result})}
            )
    emit(
        {"removed": removed, "not_removed": absent},
        as_json,
        lambda r: console.print(
            f"removed {len(r['removed'])} member(s): "
            + (", ".join(f"{m['member']} ({m['group']})" for m in r["removed"]) or "-")
        ),
    )


def variant_option(variant: str | None) -> Variant | None:
    """--variant as a Variant (m0, m1 or m2, either case); None: NEWSKG_EXTRACT_VARIANT's."""
    if variant is None:
        return None
    try:
        return Variant.parse(variant)
    except ValueError:
        fail(f"--variant must be m0, m1 or m2, not {variant!r}")
