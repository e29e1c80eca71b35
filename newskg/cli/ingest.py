"""`newskg ingest files|extract|feeds|synthetic`: articles from files, feeds or the NeoQA fictional timelines into
Kafka."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer
from rich.progress import Progress

from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.settings import Settings, get_settings
from newskg.core.timeaxes import iso, parse_instant, utc_now
from newskg.wiring import NotConfigured, Wiring

if TYPE_CHECKING:
    from apscheduler.triggers.interval import IntervalTrigger

    from newskg.evaluation.neoqa.dataset import Dataset
    from newskg.evaluation.neoqa.records import NewsArticle
    from newskg.ingest.kafka.producer import RecordProducer
    from newskg.ingest.sources.files import SourceItem

app = typer.Typer(help="Produce articles into Kafka: files, feeds, the synthetic stream.", no_args_is_help=True)

PATHS = typer.Argument(..., exists=True, help="Files or directories (.html, .html.gz, .txt, .jsonl).")


def _check_date(date: str | None) -> str | None:
    if date is None:
        return None
    try:
        return iso(parse_instant(date))
    except (ValueError, TypeError) as exc:
        fail(f"--date {date!r} is not a date (use YYYY-MM-DD): {exc}")


@app.command("files")
def ingest_files(
    paths: list[Path] = PATHS,
    source: str | None = typer.Option(None, "--source", help="Source name (default: the URL's host)."),
    date: str | None = typer.Option(None, "--date", help="Fallback publication date (YYYY-MM-DD)."),
    backfill: bool = typer.Option(
        False,
        "--backfill",
        help="Historical input: count each article as ingested when it was published (for as-of replays).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Produce every article in PATHS into the articles topic (keyed by article id, acks=all); a file or line
    that cannot be read (empty, corrupt gzip, too large, a URL that does not parse) is a dead letter with its
    reason, and the run goes on. Exit 1 only if the broker refused something."""
    from newskg.ingest.publish import ArticlePublisher
    from newskg.ingest.sources.files import find_files, read_file

    settings = get_settings()
    fallback = _check_date(date)
    files = list(find_files(paths))
    fetched_at = iso(utc_now())
    limit = settings.max_page_bytes
    items = (item for path in files for item in read_file(path, source, fallback, fetched_at, backfill, limit))
    with Wiring(settings) as wiring, Progress(console=console, transient=True, disable=as_json) as progress:
        producer = open_producer(wiring)
        task = progress.add_task("producing", total=len(files))
        seen_files: set[str] = set()

        def advance(item: SourceItem) -> None:
            path = item.origin.rsplit(":", 1)[0] if item.origin.count(":") else item.origin
            if path not in seen_files:
                seen_files.add(path)
                progress.advance(task)

        publisher = ArticlePublisher(producer, settings.topic_articles, settings.topic_dlq)
        report = publisher.publish(items, on_item=advance)
    result = {
        "files": len(files),
        "sent": report.sent,
        "raw_for_dead_letter": report.raw,
        "dead_letters": report.dead_letters,
        "topic": settings.topic_articles,
        "dlq_topic": settings.topic_dlq,
        "failed": [{"origin": origin, "error": error} for origin, error in report.failed],
    }
    emit(result, as_json, _render_report)
    if report.failed:
        raise typer.Exit(1)


def open_producer(wiring: Wiring) -> RecordProducer:
    """The articles producer of the bundle, or a clear error when Kafka is not configured or reachable."""
    from newskg.pipeline import articles_producer

    try:
        return articles_producer(wiring)
    except NotConfigured as exc:
        fail(str(exc))


def _render_report(r: dict[str, Any]) -> None:
    console.print(
        f"sent {r['sent']} articles from {r['files']} files to {r['topic']}"
        + (
            f" ({r['raw_for_dead_letter']} unreadable, sent for the dead-letter topic)"
            if r["raw_for_dead_letter"]
            else ""
        )
    )
    if r["dead_letters"]:
        console.print(f"{r['dead_letters']} unreadable files or lines sent to {r['dlq_topic']} with their reason")
    for failure in r["failed"]:
        console.print(f"[red]not sent[/] {failure['origin']}: {failure['error']}")


@app.command("extract")
def ingest_extract(
    paths: list[Path] = PATHS,
    source: str | None = typer.Option(None, "--source"),
    date: str | None = typer.Option(None, "--date", help="Fallback publication date (YYYY-MM-DD)."),
    as_json: bool = JsonOption,
) -> None:
    """Print the Article each input becomes (main text, metadata, date), without Kafka. One JSON object per line
    with --json; failures are reported as {"error": reason, "detail", "origin"} and set exit code 1."""
    from newskg.core.records import DeadLetter, RawArticle, RecordError
    from newskg.ingest.process.article import build_article
    from newskg.ingest.process.guards import Rejected
    from newskg.ingest.sources.files import find_files, read_file

    fallback = _check_date(date)
    fetched_at = iso(utc_now())
    failed = False
    for path in find_files(paths):
        for item in read_file(path, source, fallback, fetched_at):
            if isinstance(item.value, DeadLetter):  # the source could not read it
                failed = True
                out = {"error": item.value.reason, "detail": item.value.detail, "origin": item.origin}
            else:
                try:
                    raw = item.value if isinstance(item.value, RawArticle) else RawArticle.from_bytes(item.value)
                    out = build_article(raw).model_dump(mode="json")
                except (Rejected, RecordError) as exc:
                    failed = True
                    out = {"error": exc.reason, "detail": str(exc), "origin": item.origin}
            if as_json:
                typer.echo(json.dumps(out, ensure_ascii=False))
            else:
                console.print(out)
    if failed:
        raise typer.Exit(1)


@app.command("feeds")
def ingest_feeds(
    urls: list[str] = typer.Argument(
        None, help="RSS/Atom feed URLs to add to the schedule (none: run the stored schedule)."
    ),
    every: str = typer.Option("15m", "--every", help="Polling interval: 30s, 15m, 2h, 1d."),
    once: bool = typer.Option(False, "--once", help="Poll each URL once now and exit (no schedule)."),
    remove: bool = typer.Option(False, "--remove", help="Remove these URLs from the schedule and exit."),
    show: bool = typer.Option(False, "--list", help="List the stored schedule and exit."),
    as_json: bool = JsonOption,
) -> None:
    """Poll feeds politely (robots.txt of every redirect hop, private targets refused, per-domain interval,
    conditional GET, size cap) on a schedule that survives restarts; new entries' pages go to the articles
    topic, refused, unparseable or empty ones to the dead-letter topic. --once exits 1 if any feed's report
    says error."""
    from newskg.feeds import parse_every, schedule_feed, scheduler

    settings = get_settings()
    try:
        every_s = parse_every(every)
    except ValueError as exc:
        fail(str(exc))
    if once:
        _poll_once(settings, urls or [], as_json)
        return
    if remove or show:
        _edit_schedule(settings, urls or [], as_json)
        return
    sched = scheduler(settings)
    for url in urls or []:
        schedule_feed(sched, url, every_s)
    console.print(f"polling {len(urls or [])} new feed(s) plus the stored schedule; Ctrl-C stops")
    try:
        sched.start()
    except (KeyboardInterrupt, SystemExit):
        sched.shutdown(wait=True)


def _poll_once(settings: Settings, urls: list[str], as_json: bool) -> None:
    """--once: each URL now, no schedule; a feed that could not be fetched is a failed run (exit 1)."""
    from newskg.feeds import poll_once

    if not urls:
        fail("--once needs at least one feed URL")
    try:
        reports = poll_once(settings, urls)
    except NotConfigured as exc:
        fail(str(exc))
    emit({"feeds": [r.__dict__ for r in reports]}, as_json, lambda d: console.print(d))
    if any(r.status == "error" for r in reports):
        raise typer.Exit(1)


def _edit_schedule(settings: Settings, urls: list[str], as_json: bool) -> None:
    """--remove and --list: the stored schedule, without these URLs, and without running it."""
    from newskg.feeds import scheduler

    sched = scheduler(settings, blocking=False)
    sched.start(paused=True)
    for url in urls:
        for job in sched.get_jobs():
            if job.name == url:
                job.remove()
    jobs = [
        # every stored job is an interval job (newskg.feeds.schedule_feed is the only writer of the schedule)
        {
            "url": j.name,
            "every_s": cast("IntervalTrigger", j.trigger).interval.total_seconds(),
            "next": str(j.next_run_time),
        }
        for j in sched.get_jobs()
    ]
    sched.shutdown(wait=False)
    emit({"jobs": jobs}, as_json, lambda d: console.print(d))


@app.command("synthetic")
def ingest_synthetic(
    timelines: int = typer.Option(3, "--timelines", min=1, max=500, help="Fictional timelines to generate."),
    seed: int = typer.Option(0, "--seed", help="Same seed, same dataset."),
    out: Path = typer.Option(Path("data/neoqa"), "--out", help="Folder for the four JSONL files."),
    events: int = typer.Option(10, "--events", min=1, max=30, help="Events per timeline (the paper: 10)."),
    mode: str = typer.Option("offline", "--mode", help="offline (seeded templates) | llm (the paper's steps)."),
    produce: bool = typer.Option(
        True,
        "--produce/--no-produce",
        help="Send every article into the articles topic (backfilled at its fictional date).",
    ),
    as_json: bool = JsonOption,
) -> None:
    """Generate NeoQA-style timelines, articles, questions and instances, and stream the articles into Kafka."""
    if mode not in ("offline", "llm"):
        fail(f"--mode must be offline or llm, not {mode!r}")
    data = _generate(timelines, seed, events, mode, as_json)
    written = data.write(out)
    result = {
        "out": str(out),
        "timelines": len(data.timelines),
        "articles": len(data.articles),
        "questions": len(data.questions),
        "instances": len(data.instances),
        "files": {k: str(v) for k, v in written.items()},
        "sent": 0,
    }
    if produce:
        result["sent"] = _produce(data.articles, as_json)
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"{r['timelines']} timelines, {r['articles']} articles, {r['questions']} questions, {r['instances']} "
            f"instances in {r['out']}; {r['sent']} articles sent to Kafka"
        ),
    )


def _generate(timelines: int, seed: int, events: int, mode: str, quiet: bool) -> Dataset:
    with Progress(console=console, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"generating ({mode})", total=timelines)
        advance: Callable[[int], None] = lambda _index: progress.advance(task)  # noqa: E731
        if mode == "offline":
            from newskg.evaluation.neoqa.generate import generate

            return generate(timelines, seed, events=events, on_timeline=advance)
        from newskg.evaluation.neoqa.llm_generate import LLMGenerationError, generate_with_llm
        from newskg.evaluation.neoqa.llm_timeline import LLMTimelineConfig

        with Wiring(get_settings()) as wiring:
            client = wiring.llm()
            if client is None:
                fail("--mode llm needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
            try:
                return generate_with_llm(client, timelines, seed, LLMTimelineConfig(events=events), on_timeline=advance)
            except LLMGenerationError as exc:
                fail(f"LLM generation stopped: {exc}")


def _produce(articles: list[NewsArticle], quiet: bool) -> int:
    from newskg.evaluation.neoqa.generate import raw_article
    from newskg.ingest.process.article import raw_article_id
    from newskg.ingest.publish import ArticlePublisher
    from newskg.ingest.sources.files import SourceItem

    settings = get_settings()
    fetched_at = iso(utc_now())
    items: list[SourceItem] = []
    for article in articles:
        raw = raw_article(article, fetched_at)
        items.append(SourceItem(raw_article_id(raw), raw, article.article_id))
    with Wiring(settings) as wiring, Progress(console=console, transient=True, disable=quiet) as progress:
        producer = open_producer(wiring)
        task = progress.add_task("producing", total=len(items))
        report = ArticlePublisher(producer, settings.topic_articles).publish(
            items, on_item=lambda _item: progress.advance(task)
        )
    for origin, error in report.failed:
        console.print(f"[red]not sent[/] {origin}: {error}")
    if report.failed:
        raise typer.Exit(1)
    return report.sent
