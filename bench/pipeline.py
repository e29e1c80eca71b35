"""End-to-end stream against its NLP bound, and its scaling to two processes (issue 20).

Real servers of a temporary data dir (`newskg services up`: noida broker, FalkorDB; Qdrant local mode per process),
real pages (`--pages`: the bundled ones by default; the README's figures use the 91 pages of
scrapinghub/article-extraction-benchmark, the same layout), and real stage processes (`newskg run all --json`,
the process and extract stages of one consumer group each, M0 offline, the mirror on). Figures:

1. `pipeline_articles_per_s`: articles/s from the articles topic to the graph and the mirror: from the first
   publish until both groups have committed everything (the extract stage commits only after its graph write
   and mirror upsert), one `newskg run all` process, warmed first (models loaded, a few articles through);
2. `bound_articles_per_s`: the same articles' chunks (read back from the chunks topic, so the very chunks the
   pipeline extracted) through bare spaCy NER + parse (the extractor's own pipeline, extract/nlp.py) plus the
   embedding of the same chunk texts (the configured embedder, newskg/wiring.py `open_embedder`, so whichever
   backend NEWSKG_EMBED settings choose), in this process, in the same run;
3. `pipeline_vs_bound` = 1 / 2 (goal >= 0.8);
4. `pipeline_vs_model_work`: 1 against the bound plus the model work the stream does beyond it, measured the same
   way in this process: the process stage's own work on the same articles (main text, sentences, windows, dedup)
   and the embedding of the interaction texts the stream wrote (the mirror embeds each one). What it lacks of 1.0
   is the plumbing: Kafka, JSON, graph writes and read-backs, Qdrant upserts, linking and M0's rules;
5. `pipeline_two_process_scaling`: the same stream through two `newskg run all` processes of the same groups
   (2 partitions each topic: one of each per process; each its own Qdrant folder, as local mode admits one
   process; OMP_NUM_THREADS = cores / processes in each, as CPU limits would share them), divided by 1 (goal
   >= 1.6; only meaningful on an idle machine: the load average is in the units);
6. `stage_rss_mb_*`: the peak RSS (VmHWM) of each stage process;
7. `pipeline_cpu_vs_bound`: the bound's CPU seconds (parse and embedding, every thread of this process) over the
   stage process's in the measured window: the work per article, which a shared machine's load barely moves (the
   wall-clock figures swing by 1.5x here under others' benchmarks); what overlapping model work across the cores
   gains shows only in the wall-clock ratio.

Run: `.venv/bin/python -m bench.pipeline [--pages DIR] [--rounds N] [--json]` (`--rounds` publishes the article set
N times under distinct URLs and fetch instants: each copy is a new article whose chunks the dedup index sees as
near-duplicates, so use it only to lengthen a modest run; the figures say how many articles went through).
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from newskg.core.records import Chunk, RawArticle, decode_any
from newskg.core.settings import Settings
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka import client
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.process.article import build_article, raw_article_id
from newskg.ingest.process.chunking import windows
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.sentences import split_many
from newskg.ingest.publish import ArticlePublisher
from newskg.ingest.sources.files import SourceItem
from newskg.pipeline import articles_producer
from newskg.services.manager import ServiceManager
from newskg.wiring import Wiring, kafka_options, open_embedder, open_graph

REPO = Path(__file__).resolve().parents[1]
BUNDLED_PAGES = REPO / "tests" / "fixtures" / "news-html"
PARTITIONS = 2
WARM_UP_ARTICLES = 6
FETCHED_AT = "2024-01-01T00:00:00Z"
THREADS_NOTE = "OMP_NUM_THREADS and NEWSKG_EMBED_THREADS = cores / processes in each"
WARM_UP_DAY = 20231231  # the warm-up stories' publication day: their interactions are left out of the figures
console = Console(stderr=True, width=120)


def load_pages(folder: Path) -> list[str]:
    return [gzip.decompress(p.read_bytes()).decode("utf-8", "replace") for p in sorted(folder.glob("*.html.gz"))]


def page_articles(pages: list[str], round_: int) -> list[RawArticle]:
    """The pages as raw articles, backfilled (their own publication day is their ingestion day); `round_` > 0
    makes distinct copies (a URL of their own)."""
    return [
        RawArticle(
            html=html,
            url=f"https://pipeline.bench/{round_}/{n}" if round_ else None,
            fetched_at=FETCHED_AT,
            fallback_date="2020-01-01",
            source="bench",
            backfill=True,
        )
        for n, html in enumerate(pages)
    ]


def warm_up_articles(prefix: str) -> list[RawArticle]:
    """Short synthetic stories (not measured): every model in the stage processes loaded before the clock."""
    names = [
        ("Maria Lopez", "Siemens", "Berlin"),
        ("James Carter", "Airbus", "Toulouse"),
        ("Anna Schmidt", "Nestle", "Vevey"),
    ]
    return [
        RawArticle(
            url=f"https://warm.bench/{prefix}/{i}",
            title=f"{p} visits {o}",
            text=f"{p} met the board of {o} in {c} on Monday, story {prefix} {i}. "
            f"{p} said the talks with {o} would continue next week, according to officials in {c}.",
            fetched_at=FETCHED_AT,
            published="2023-12-31",
            source="warm",
        )
        for i in range(WARM_UP_ARTICLES)
        for p, o, c in [names[i % len(names)]]
    ]


def publish(settings: Settings, raws: list[RawArticle], origin: str) -> None:
    with Wiring(settings) as wiring:
        report = ArticlePublisher(articles_producer(wiring), settings.topic_articles).publish(
            SourceItem(raw_article_id(r), r, f"{origin}:{n}") for n, r in enumerate(raws)
        )
    if report.sent != len(raws):
        raise RuntimeError(f"articles refused: {report.failed}")


class GroupLag:
    """Messages the process and extract groups have not committed yet, read from the broker as an operator would
    (the clients kept open between reads: the bench polls it several times a second)."""

    def __init__(self, settings: Settings):
        options = kafka_options(settings)
        self.admin, self.offsets = client.admin(options), client.consumer(options)
        self.watched = [
            (settings.consumer_group("process"), settings.topic_articles),
            (settings.consumer_group("extract"), settings.topic_chunks),
        ]

    def total(self) -> int:
        lag = 0
        for group, topic in self.watched:
            tps = client.partitions_of(topic, self.offsets.partitions_for_topic(topic) or ())
            ends = self.offsets.end_offsets(tps)
            committed = self.admin.list_group_offsets({group: None}).get(group, {})
            done = {tp.partition: m.offset for tp, m in committed.items() if tp.topic == topic and m.offset >= 0}
            lag += sum(end - done.get(tp.partition, 0) for tp, end in ends.items())
        return lag

    def close(self) -> None:
        self.admin.close()
        self.offsets.close()


@dataclass
class StageProc:
    """A `newskg run all --json` subprocess whose log lines the bench watches."""

    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list[str])

    @classmethod
    def start(cls, env: dict[str, str], profile: Path | None = None) -> StageProc:
        """`profile`: run it under cProfile, its stats written there when it exits (after SIGTERM)."""
        profiler = ["-m", "cProfile", "-o", str(profile)] if profile else []
        proc = subprocess.Popen(
            [sys.executable, *profiler, "-m", "newskg", "run", "all", "--json"],
            env=env,
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        stage = cls(proc)
        threading.Thread(target=stage._read, daemon=True).start()
        return stage

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def holds(self, topic: str) -> set[int]:
        """The partitions of `topic` its log says it holds after its last assignment."""
        held = [line for line in list(self.lines) if " holds " in line and topic in line]
        return {int(n) for n in re.findall(re.escape(topic) + r"\[(\d+)\]", held[-1])} if held else set()

    def cpu_s(self) -> float:
        """CPU seconds (user + system, every thread) the process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def peak_rss_mb(self) -> float:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024

    def check(self) -> None:
        if self.proc.poll() is not None:
            raise RuntimeError(f"a stage process exited ({self.proc.returncode}):\n{''.join(self.lines)[-3000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)  # finish the batch in hand, commit, exit
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)


def wait(predicate, timeout_s: float, what: str, stages: list[StageProc], every_s: float = 0.2) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        for stage in stages:
            stage.check()
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(every_s)


@dataclass(frozen=True)
class StreamRun:
    processes: int
    articles: int
    seconds: float
    rss_mb: tuple[float, ...]
    cpu_s: float = 0.0  # CPU seconds the stage processes used in the measured window

    @property
    def rate(self) -> float:
        return self.articles / self.seconds


def stream(
    base: Settings,
    env: dict[str, str],
    folder: Path,
    name: str,
    processes: int,
    raws: list[RawArticle],
    profile: Path | None = None,
):
    """`raws` through `processes` warmed `newskg run all` processes of fresh topics, groups and graph; the seconds
    from the first publish until both groups have committed everything. `profile`: a folder for each process's
    cProfile stats (`stage-N.prof`; the profiler slows the stream, so its figures are not comparable)."""
    prefix = f"{name}{os.getpid()}"
    topics = {f"topic_{k}": f"{prefix}.{k}" for k in ("articles", "chunks", "dlq", "dedup")}
    settings = base.model_copy(
        update=topics | {"group_prefix": prefix, "graph_database": prefix, "topic_partitions": PARTITIONS}
    )
    run_env = env | {f"NEWSKG_{k.upper()}": v for k, v in topics.items()}
    run_env |= {"NEWSKG_GROUP_PREFIX": prefix, "NEWSKG_GRAPH_DATABASE": prefix, "NEWSKG_TOPIC_PARTITIONS": "2"}
    with Wiring(settings) as wiring:
        articles_producer(wiring)  # the topics, with their partitions, before any member joins
    threads = str(max(1, (os.cpu_count() or 1) // processes))
    if profile:
        profile.mkdir(parents=True, exist_ok=True)
    stages = [
        StageProc.start(
            run_env
            | {
                "NEWSKG_INSTANCE_ID": f"{prefix}-{i}",
                "NEWSKG_QDRANT_PATH": str(folder / f"qdrant-{prefix}-{i}"),
                "OMP_NUM_THREADS": threads,  # the cores shared out between the processes, as CPU limits would
                # ... and ONNX Runtime's, which OMP_NUM_THREADS does not set (unless the caller chose them)
                "NEWSKG_EMBED_THREADS": run_env.get("NEWSKG_EMBED_THREADS", threads),
            },
            profile / f"{name}-stage-{i}.prof" if profile else None,
        )
        for i in range(processes)
    ]
    lag = None
    try:
        per_process = PARTITIONS // processes
        for topic in (settings.topic_articles, settings.topic_chunks):
            wait(lambda t=topic: all(len(s.holds(t)) == per_process for s in stages), 300, f"{topic} held", stages)
        lag = GroupLag(settings)
        publish(settings, warm_up_articles(prefix), "warm-up")
        wait(lambda: lag.total() == 0, 600, "the warm-up articles through", stages, every_s=0.5)
        start, cpu_start = time.perf_counter(), sum(s.cpu_s() for s in stages)
        publish(settings, raws, name)
        wait(lambda: lag.total() == 0, 1800, "the articles through", stages, every_s=0.1)
        seconds = time.perf_counter() - start
        cpu_s = sum(s.cpu_s() for s in stages) - cpu_start
        rss = tuple(round(s.peak_rss_mb()) for s in stages)
    finally:
        if lag:
            lag.close()
        for stage in stages:
            stage.stop()
    return StreamRun(processes, len(raws), seconds, rss, cpu_s), chunk_texts(settings), interaction_texts(settings)


def chunk_texts(settings: Settings) -> list[str]:
    """The texts of the chunks the process stage kept for the measured articles (not the warm-up ones)."""
    records = (decode_any(r.value or b"") for r in read_topic(kafka_options(settings), settings.topic_chunks))
    return [c.text for c in records if isinstance(c, Chunk) and "warm.bench" not in (c.url or "")]


def interaction_texts(settings: Settings) -> list[str]:
    """The texts of the interactions the stream wrote for the measured articles (the mirror embeds each one)."""
    with open_graph(settings) as conn:
        store = GraphStore(conn)
        found = store.interactions(sorted(store.ids("Interaction")))
    return [i.text for i in found if i.published_day != WARM_UP_DAY]


def process_seconds(settings: Settings, raws: list[RawArticle]) -> float:
    """The process stage's own work on the articles, in this process: main text, sentences, windows, dedup."""
    split_many(["Warm up the sentence model."])
    start = time.perf_counter()
    articles = [build_article(raw) for raw in raws]
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    for article, sentences in zip(articles, split_many([a.text for a in articles]), strict=True):
        for window in windows(sentences, settings.chunk_sentences, settings.chunk_stride):
            signature = index.signer.sign(window.text)
            if index.decide(window.text, article.id, signature).kind == "new":
                index.add(window.text, article.id, signature)
    return time.perf_counter() - start


@dataclass(frozen=True)
class Bound:
    chunks: int
    parse_s: float
    embed_s: float
    backend: str
    interactions: int = 0
    interactions_embed_s: float = 0.0
    process_s: float = 0.0
    cpu_s: float = 0.0  # CPU seconds (every thread of this process) of the parse and the embedding

    def rate(self, articles: int) -> float:
        return articles / (self.parse_s + self.embed_s)

    def work_rate(self, articles: int) -> float:
        """The bound plus the model work the stream does beyond it: the process stage's own work and the
        embedding of the interaction texts (what is left between the two is the plumbing: Kafka, JSON, graph
        writes and reads, the Qdrant upserts, linking and M0's rules)."""
        return articles / (self.parse_s + self.embed_s + self.interactions_embed_s + self.process_s)


def bound(settings: Settings, texts: list[str]) -> Bound:
    """Bare spaCy NER + parse (the extractor's pipeline and batch size) and the embedding of the same chunk texts,
    in this process, each model loaded and warmed before its clock."""
    from newskg.extract.nlp import pipeline

    nlp = pipeline()
    list(nlp.pipe(texts[:8], batch_size=32))
    start, cpu = time.perf_counter(), time.process_time()
    for _ in nlp.pipe(texts, batch_size=32):
        pass
    parse_s, parse_cpu = time.perf_counter() - start, time.process_time() - cpu
    embedder = open_embedder(settings)
    embedder.embed(texts[:8])
    start, cpu = time.perf_counter(), time.process_time()
    embedder.embed(texts)
    embed_cpu = time.process_time() - cpu
    return Bound(len(texts), parse_s, time.perf_counter() - start, embedder.name, cpu_s=parse_cpu + embed_cpu)


def beyond_bound(settings: Settings, b: Bound, interactions: list[str], raws: list[RawArticle]) -> Bound:
    embedder = open_embedder(settings)
    embedder.embed(interactions[:8])
    start = time.perf_counter()
    embedder.embed(interactions)
    embed_s = time.perf_counter() - start
    return replace(
        b, interactions=len(interactions), interactions_embed_s=embed_s, process_s=process_seconds(settings, raws)
    )


def private_stack(folder: Path) -> tuple[ServiceManager, Settings, dict[str, str]]:
    """Broker and graph of a temporary data dir, and the env that points the CLI at them. The caller's NEWSKG_
    embedding settings are kept (this process's Settings reads them too): the stages and the bound embed alike."""
    settings = Settings(data_dir=folder / "data", _env_file=None)  # pyright: ignore[reportCallIssue]
    manager = ServiceManager(settings)
    manager.up(only={"broker", "graph"})
    kept = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_") or "EMBED" in k}
    env = kept | {
        "NEWSKG_DATA_DIR": str(settings.data_dir),
        "NEWSKG_EXTRACT_VARIANT": "m0",
        "NEWSKG_MIRROR_ENABLED": "true",
        "PYTHONPATH": str(REPO),
    }
    return manager, settings, env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=BUNDLED_PAGES, help="real pages (default: the bundled ones)")
    parser.add_argument(
        "--real-pages", action="store_true", help="the 91 benchmark pages beside the checkout (shared/data/news-html)"
    )
    parser.add_argument("--rounds", type=int, default=1, help="copies of the page set (see the docstring)")
    parser.add_argument("--skip-scaling", action="store_true", help="no two-process run")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (tables on stderr)")
    parser.add_argument(
        "--profile", type=Path, help="write each stage process's cProfile stats into this folder (slows the stream)"
    )
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    logging.getLogger("kafka").setLevel(logging.ERROR)
    pages = load_pages(REPO.parent / "shared" / "data" / "news-html" if args.real_pages else args.pages)
    raws = [r for round_ in range(args.rounds) for r in page_articles(pages, round_)]
    folder = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    manager, settings, env = private_stack(folder)
    load_before = os.getloadavg()
    try:
        console.print(f"one process: {len(raws)} articles ({len(pages)} pages x {args.rounds})")
        one, texts, interactions = stream(settings, env, folder, "one", 1, raws, args.profile)
        # Right after the stream it is compared with: the machine is shared, its load drifts over minutes.
        console.print(
            f"bound: {len(texts)} chunks; beyond it: {len(interactions)} interaction texts, the process stage"
        )
        nlp_bound = beyond_bound(settings, bound(settings, texts), interactions, raws)
        two = None
        if not args.skip_scaling:
            console.print("two processes")
            two, _, _ = stream(settings, env, folder, "two", 2, raws)
    finally:
        manager.down()
    load_after = os.getloadavg()
    report(
        one, two, nlp_bound, load_before, load_after, args.json, " ".join(["python -m bench.pipeline", *sys.argv[1:]])
    )


def report(one: StreamRun, two: StreamRun | None, b: Bound, before, after, as_json: bool, command: str) -> None:
    load = f"load average {before[0]:.1f} before, {after[0]:.1f} after"
    bound_rate = b.rate(one.articles)
    figures: dict[str, Figure] = {
        "pipeline_articles_per_s": figure(
            round(one.rate, 3), f"articles/s Kafka -> graph + mirror, 1 process, {one.articles} articles, {load}"
        ),
        "bound_articles_per_s": figure(
            round(bound_rate, 3),
            f"articles/s, spaCy NER+parse {b.parse_s:.1f} s + {b.backend} embedding {b.embed_s:.1f} s of "
            f"{b.chunks} chunks, in-process",
        ),
        "pipeline_vs_bound": figure(
            round(one.rate, 3), "ratio pipeline / bound articles/s (goal >= 0.8)", round(bound_rate, 3)
        ),
        "pipeline_vs_model_work": figure(
            round(one.rate, 3),
            f"ratio pipeline / (bound + process stage {b.process_s:.1f} s + embedding of {b.interactions} "
            f"interaction texts {b.interactions_embed_s:.1f} s) articles/s: what the plumbing costs",
            round(b.work_rate(one.articles), 3),
        ),
    }
    figures["pipeline_cpu_vs_bound"] = figure(
        round(b.cpu_s, 2),
        f"ratio bound CPU s / stage CPU s {one.cpu_s:.1f} (every thread, measured window): the stream's work per "
        "article against the bound's, steady under load (overlap does not show in it; goal-less)",
        round(one.cpu_s, 2),
    )
    for i, rss in enumerate(one.rss_mb):
        figures[f"stage_rss_mb_one_{i}"] = figure(rss, "peak RSS (VmHWM) of a `newskg run all` process, 1-process run")
    if two is not None:
        figures["pipeline_two_process_scaling"] = figure(
            round(two.rate, 3),
            f"articles/s, 2 processes vs 1 (goal >= 1.6 on an idle machine; {load}; {THREADS_NOTE})",
            round(one.rate, 3),
        )
        for i, rss in enumerate(two.rss_mb):
            figures[f"stage_rss_mb_two_{i}"] = figure(
                rss, "peak RSS (VmHWM) of a `newskg run all` process, 2-process run"
            )
    table = Table(title=f"end-to-end stream vs bound ({load})")
    for column in ("figure", "value", "unit", "baseline", "ratio"):
        table.add_column(column)
    for name, f in figures.items():
        table.add_row(name, str(f["value"]), f["unit"], str(f["baseline"] or ""), str(f["ratio"] or ""))
    console.print(table)
    if as_json:
        emit(figures, command)
    else:
        print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
