"""`newskg extract text|stats`: linking and open-IE on one text (no Kafka), and LLM usage."""

from __future__ import annotations

from typing import Any

import typer
from rich.table import Table

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.ids import chunk_id, source_id
from newskg.core.records import Chunk, Variant
from newskg.core.settings import get_settings
from newskg.core.timeaxes import day_key, epoch_ms, iso, parse_instant, utc_now
from newskg.wiring import NotConfigured, Wiring

app = typer.Typer(help="Entity linking and open-IE on a text, LLM usage stats.", no_args_is_help=True)


@app.command("text")
def extract_text(
    text: str = typer.Argument(..., help="The text of one chunk (a few sentences)."),
    date: str = typer.Option(..., "--date", help="Publication date, YYYY-MM-DD."),
    subject: list[str] = typer.Option(None, "--subject", help="Target subject name (repeatable); M1/M2."),
    variant: str = typer.Option("m0", "--variant", help="m0 (offline), m1 or m2 (LLM)."),
    explain: bool = typer.Option(False, "--explain", help="Show why each mention links where it does."),
    as_json: bool = JsonOption,
) -> None:
    """Entities (with canonical ids), the <e> marked-up text and interactions of TEXT. Reads the graph's known
    entities for linking, writes nothing."""
    from newskg.pipeline import extract_stage

    try:
        chosen = Variant.parse(variant)
    except ValueError:
        fail(f"--variant must be m0, m1 or m2, not {variant!r}")
    if not text.strip():
        fail("the text is empty")
    try:
        published = parse_instant(date)
    except (ValueError, TypeError) as exc:
        fail(f"--date {date!r} is not a date: {exc}")
    settings = get_settings()
    if subject:
        settings = settings.model_copy(update={"extract_subjects": subject})
    now = utc_now()
    chunk = Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id="cli",
        article_ids=["cli"],
        source="cli",
        source_id=source_id("cli"),
        day=day_key(published),
        published=iso(published),
        ingested_at=iso(now),
        ingested_ms=epoch_ms(now),
        sentence_start=0,
        sentence_end=1,
    )
    with Wiring(settings) as wiring:
        try:
            stage = extract_stage(wiring, chosen, with_mirror=False)
        except (NotConfigured, ValueError) as exc:
            fail(str(exc))
        result = stage.extract([chunk])[0]
    # as_dict returns a bare dict (newskg/extract is not strict yet: typed in its own branch)
    emit(result.as_dict(explain=explain), as_json, lambda d: _render(d, explain))


def _render(data: dict[str, Any], explain: bool) -> None:
    console.print(data["marked_text"])
    table = Table(title="mentions")
    for column in ("text", "entity", "type", "id", "method") + (("why",) if explain else ()):
        table.add_column(column, overflow="fold")
    for m in data["mentions"]:
        table.add_row(
            m["text"], m["name"], m["type"], m["entity_id"], m["method"], *((m["explanation"],) if explain else ())
        )
    console.print(table)
    for i in data["interactions"]:
        console.print(f"{i['event_day']}  [bold]{i['text']}[/]  ({i['variant']})")


@app.command("stats")
def extract_stats(as_json: bool = JsonOption) -> None:
    """LLM calls, cache hits, failures, tokens and cost so far, per model and prompt; and what became of the
    answers (e.g. m2_pair lines_dropped_uncited, batches_failed, batches_dead_lettered)."""
    from newskg.core.llm.cache import LLMCache

    settings = get_settings()
    cache = LLMCache(settings.data_dir / "llm" / "cache.sqlite")
    rows = cache.usage()
    totals = {
        k: sum(r[k] for r in rows)
        for k in ("calls", "cached", "failures", "prompt_tokens", "completion_tokens", "cost_usd")
    }
    counters: dict[str, int] = {}
    for row in cache.counters():
        key = f"{row['prompt']}.{row['name']}"
        counters[key] = counters.get(key, 0) + row["n"]
    emit(
        {"totals": totals, "by_prompt": rows, "counters": counters, "counters_by_model": cache.counters()},
        as_json,
        lambda d: console.print(d),
    )
