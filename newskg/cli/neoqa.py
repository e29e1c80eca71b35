"""`newskg ingest synthetic` (NeoQA fictional timelines as a news stream) and `newskg eval neoqa`."""

from __future__ import annotations

import random
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import Progress
from rich.table import Table

from core.settings import get_settings
from core.timeaxes import iso, utc_now
from newskg.cli.app import eval_app, ingest_app
from newskg.cli.ingest import open_producer
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.extras import MissingExtra, require
from newskg.wiring import NotConfigured, Wiring

if TYPE_CHECKING:
    from graph.mirror.base import VectorMirror

ANSWERERS = ("evidence", "graph", "llm")
SETS = ("main", "ablation", "all")


@ingest_app.command("synthetic")
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


def _generate(timelines: int, seed: int, events: int, mode: str, quiet: bool):
    with Progress(console=console, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"generating ({mode})", total=timelines)
        advance = lambda _index: progress.advance(task)  # noqa: E731
        if mode == "offline":
            from evaluation.neoqa.generate import generate

            return generate(timelines, seed, events=events, on_timeline=advance)
        from evaluation.neoqa.llm_generate import LLMGenerationError, generate_with_llm

        with Wiring(get_settings()) as wiring:
            client = wiring.llm()
            if client is None:
                fail("--mode llm needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
            try:
                return generate_with_llm(client, timelines, seed, events=events, on_timeline=advance)
            except LLMGenerationError as exc:
                fail(f"LLM generation stopped: {exc}")


def _produce(articles, quiet: bool) -> int:
    from evaluation.neoqa.generate import raw_article
    from ingest.process.article import raw_article_id
    from ingest.publish import ArticlePublisher
    from ingest.sources.files import SourceItem

    settings = get_settings()
    fetched_at = iso(utc_now())
    items = []
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


@eval_app.command("neoqa")
def eval_neoqa(
    instances: Path = typer.Option(
        ...,
        "--instances",
        exists=True,
        dir_okay=False,
        help="instances.jsonl (ours or the public release); articles are read from "
        "the same folder unless --data says otherwise.",
    ),
    answerer: str = typer.Option("evidence", "--answerer", help="evidence | graph | llm"),
    data_dir: Path | None = typer.Option(None, "--data", help="Folder holding articles.jsonl (or news.jsonl)."),
    instance_set: str = typer.Option("main", "--set", help="main | ablation | all"),
    limit: int | None = typer.Option(None, "--limit", min=1, help="A seeded random sample of this many instances."),
    out: Path | None = typer.Option(None, "--out", help="Report folder (default: <data dir>/eval/neoqa-<answerer>)."),
    max_documents: int = typer.Option(4, "--max-docs", min=1, help="llm: articles shown per question."),
    max_chars: int = typer.Option(3000, "--max-chars", min=200, help="llm: characters of evidence per question."),
    as_json: bool = JsonOption,
) -> None:
    """Multiple-choice NeoQA: accuracy per category, parse rate, ADTScore; JSON + HTML report with plots."""
    from evaluation.neoqa.dataset import DatasetError, load

    try:
        require("matplotlib", "eval", "the evaluation report's plots")
    except MissingExtra as exc:
        fail(str(exc))
    from evaluation.neoqa.report import write_report
    from evaluation.neoqa.run import run

    if answerer not in ANSWERERS:
        fail(f"--answerer must be one of {', '.join(ANSWERERS)}, not {answerer!r}")
    if instance_set not in SETS:
        fail(f"--set must be one of {', '.join(SETS)}, not {instance_set!r}")
    try:
        data = load(data_dir or instances.parent, instances)
    except DatasetError as exc:
        fail(str(exc))
    chosen = [i for i in data.instances if instance_set == "all" or i.instance_set.startswith(instance_set)]
    if limit and len(chosen) > limit:
        chosen = random.Random(0).sample(chosen, limit)
    if not chosen:
        fail(f"no instances in set {instance_set!r} of {instances}")
    settings = get_settings()
    with Wiring(settings) as wiring, Progress(console=console, transient=True, disable=as_json) as progress:
        reader = _answerer(answerer, wiring, max_documents, max_chars)
        task = progress.add_task(f"answering ({answerer})", total=len(chosen))
        result = run(
            data, reader, chosen, workers=4 if answerer != "evidence" else 1, on_done=lambda: progress.advance(task)
        )
    folder = out or settings.data_dir / "eval" / f"neoqa-{answerer}"
    paths = write_report(result, folder, "NeoQA")
    emit(
        {
            "answerer": answerer,
            "set": instance_set,
            "summary": result.summary,
            "by_set": result.by_set,
            "report": {k: str(v) for k, v in paths.items()},
        },
        as_json,
        _render,
    )


def _answerer(name: str, wiring: Wiring, max_documents: int, max_chars: int):
    from evaluation.neoqa.answerers import EvidenceAnswerer, GraphAnswerer, LLMAnswerer

    if name == "evidence":
        return EvidenceAnswerer()
    if name == "graph":
        from graph.store.store import GraphStore

        try:
            return GraphAnswerer(GraphStore(wiring.graph()), _mirror_or_none(wiring))
        except NotConfigured as exc:
            fail(str(exc))
    client = wiring.llm()
    if client is None:
        fail("--answerer llm needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
    return LLMAnswerer(client, max_documents, max_chars)


def _mirror_or_none(wiring: Wiring) -> VectorMirror | None:
    """The mirror adds nearest-chunk retrieval; the embedded mirror's folder held by another process (`serve
    --pipeline`) admits no second opener, and then the graph alone answers, said out loud."""
    if not wiring.settings.mirror_enabled:
        return None
    try:
        return wiring.mirror()
    except RuntimeError as exc:
        console.print(f"[yellow]mirror unavailable ({exc}); answering from the graph alone[/]")
        return None


def _render(r: dict) -> None:
    table = Table(title=f"NeoQA ({r['answerer']} answerer, set {r['set']}); random = 14.3")
    for column in (
        "set",
        "n",
        "ADTScore",
        "acc ans.",
        "acc unans.",
        "parsed %",
        "MH ans",
        "TS ans",
        "MH unans",
        "TS unans",
        "FP",
        "US",
    ):
        table.add_column(column, justify="right")
    for name, s in [("all", r["summary"]), *r["by_set"].items()]:
        cells = [f"{c['accuracy']:.1f}" if c["accuracy"] is not None else "-" for c in s["columns"]]
        table.add_row(
            name,
            str(s["instances"]),
            f"{s['adt_score']:.1f}",
            f"{s['acc_answerable']:.1f}",
            f"{s['acc_unanswerable']:.1f}",
            f"{s['parse_rate']:.1f}",
            *cells,
        )
    console.print(table)
    console.print(f"report: {r['report']['html']}")
