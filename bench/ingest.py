"""Ingestion figures: main-text quality, process-stage speed, MinHash speed, LSH quality, dedup state stores.

Prints, on this machine:
  1. main-text token F1 against the gold `articleBody` of the 91 real pages (goal >= 0.90);
  2. process-stage articles/s: in-process (CPU only) and end to end through the local broker;
  3. MinHash signatures/s with cached permutations against datasketch's default (baseline, same run);
  4. recall/precision of the dedup decision (LSH candidates + estimated Jaccard) against exact trigram Jaccard
     >= threshold on a sample of edited copies (goal recall >= 0.95);
  5. the shared dedup state: in-memory LSH + Kafka signature log against datasketch's Redis storage on the
     FalkorDB redis-server (baseline, same run);
  6. the dedup log's replay through the local broker (entries/s, stage start-up time) and the index's memory,
     each measured on a given number of synthetic signatures and extrapolated linearly (labelled so) to 1 M
     signatures and to 30 days x 50k chunks/day = 1.5 M signatures when fewer were measured.
Run: `make bench` or `.venv/bin/python -m bench.ingest [--pages DIR]`;
     dedup state only: `.venv/bin/python -m bench.ingest --dedup-only [--replay-signatures N]
     [--memory-signatures N]`.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import gc
import gzip
import json
import logging
import random
import sys
import tempfile
import time
import tracemalloc
import uuid
from pathlib import Path

import numpy as np
from datasketch import MinHash, MinHashLSH
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from newskg.core.records import DedupSignature, RawArticle
from newskg.core.settings import Settings
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.kafka.stage import run_stages
from newskg.ingest.process.article import build_article, raw_article_id
from newskg.ingest.process.chunking import windows
from newskg.ingest.process.dedup import DedupIndex, exact_jaccard
from newskg.ingest.process.quality import token_f1
from newskg.ingest.process.sentences import split_many
from newskg.ingest.process.signature_log import LOG_TOPIC_CONFIG, Kept, SignatureLog
from newskg.pipeline import build_runners
from newskg.services.manager import ServiceManager
from newskg.wiring import Wiring, kafka_options

REPO = Path(__file__).resolve().parents[1]
# The 8 real pages bundled with the tests. The README's figures were measured on all 91 pages of the public
# scrapinghub/article-extraction-benchmark data set (its html/ pages and ground-truth.json, the same layout):
# pass that folder with --pages.
BUNDLED_PAGES = REPO / "tests" / "fixtures" / "news-html"
NOW = "2024-01-01T00:00:00Z"


def load_pages(folder: Path) -> list[tuple[str, str, str]]:
    gold = json.loads((folder / "ground-truth.json").read_text())
    return [
        (
            key,
            gzip.decompress((folder / f"{key}.html.gz").read_bytes()).decode("utf-8", "replace"),
            entry["articleBody"],
        )
        for key, entry in sorted(gold.items())
    ]


def raw_of(html: str) -> RawArticle:
    return RawArticle(html=html, fetched_at=NOW, fallback_date="2020-01-01", source="bench")


def quality_and_speed(pages, settings: Settings) -> tuple[float, float, list[str]]:
    start = time.perf_counter()
    articles = [build_article(raw_of(html)) for _, html, _ in pages]
    sentence_lists = split_many([a.text for a in articles])
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    chunk_texts = []
    for article, sentences in zip(articles, sentence_lists, strict=True):
        for window in windows(sentences, settings.chunk_sentences, settings.chunk_stride):
            mh = index.signer.sign(window.text)
            if index.decide(window.text, article.id, mh).kind == "new":
                index.add(window.text, article.id, mh)
            chunk_texts.append(window.text)
    rate = len(pages) / (time.perf_counter() - start)
    f1 = sum(token_f1(a.text, gold) for a, (_, _, gold) in zip(articles, pages, strict=True)) / len(pages)
    return f1, rate, chunk_texts


def minhash_rates(texts: list[str], num_perm: int) -> tuple[float, float]:
    index = DedupIndex(0.7, num_perm)
    start = time.perf_counter()
    for text in texts:
        index.signer.sign(text)
    ours = len(texts) / (time.perf_counter() - start)
    from newskg.ingest.process.dedup import shingles

    start = time.perf_counter()
    for text in texts:
        mh = MinHash(num_perm=num_perm)
        mh.update_batch(list(shingles(text)) or [b""])
    return ours, len(texts) / (time.perf_counter() - start)


def edit(text: str, rate: float, rng: random.Random) -> str:
    words = text.split()
    for i in range(len(words)):
        if rng.random() < rate:
            words[i] = rng.choice(["said", "new", "city", "report", "today", "officials", "about"])
    return " ".join(words)


def lsh_quality(texts: list[str], threshold: float, num_perm: int, queries: int = 300) -> dict:
    rng = random.Random(7)
    index = DedupIndex(threshold, num_perm)
    for i, text in enumerate(texts):
        index.add(f"k{i}", f"a{i}", index.signer.sign(text))
    tp = fp = fn = 0
    for q in range(queries):
        original = rng.randrange(len(texts))
        query = edit(texts[original], rng.choice([0.02, 0.05, 0.1, 0.15, 0.25]), rng)
        truth = {f"k{i}" for i, t in enumerate(texts) if exact_jaccard(query, t) >= threshold}
        decision = index.decide(f"q{q}", "query-article", index.signer.sign(query))
        predicted = {decision.chunk_id} if decision.kind == "duplicate" else set()
        tp += len(predicted & truth)
        fp += len(predicted - truth)
        fn += int(bool(truth) and not (predicted & truth))
    return {"recall": tp / max(1, tp + fn), "precision": tp / max(1, tp + fp), "queries": queries, "positives": tp + fn}


def end_to_end(pages, settings: Settings) -> float:
    options = kafka_options(settings)
    prefix = f"bench{uuid.uuid4().hex[:6]}"
    settings = settings.model_copy(
        update={f"topic_{k}": f"{prefix}.{k}" for k in ("articles", "chunks", "dlq", "dedup")}
    )
    with Wiring(settings) as wiring:
        runner = build_runners(wiring, ["process"])[0]
        producer = RecordProducer(options)
        producer.send_all(settings.topic_articles, [(raw_article_id(raw_of(h)), raw_of(h)) for _, h, _ in pages])
        start = time.perf_counter()
        run_stages([runner], until_idle=True)
        elapsed = time.perf_counter() - start
    return runner.stats.consumed / elapsed


def state_stores(texts: list[str], settings: Settings) -> tuple[float, float]:
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    signed = [(f"c{i}", "a", index.signer.sign(t)) for i, t in enumerate(texts)]
    options = kafka_options(settings)
    topic = f"bench{uuid.uuid4().hex[:6]}.dedup"
    from newskg.ingest.kafka.admin import TopicAdmin

    TopicAdmin(options).ensure_topics([topic], 3)
    producer = RecordProducer(options)
    log = SignatureLog(options, topic, producer)
    start = time.perf_counter()
    for key, article, mh in signed:
        index.decide(key, article, mh)
        index.add(key, article, mh)
    for batch in range(0, len(signed), 64):
        log.append(index, [Kept(cid, article, mh, None) for cid, article, mh in signed[batch : batch + 64]], [])
    ours = len(signed) / (time.perf_counter() - start)
    log.close()
    record = ServiceManager(settings).state.load()["graph"]
    redis_lsh = MinHashLSH(
        threshold=settings.dedup_threshold,
        num_perm=settings.dedup_num_perm,
        storage_config={
            "type": "redis",
            "basename": f"bench{uuid.uuid4().hex[:6]}".encode(),
            "redis": {"host": record.host, "port": record.port},
        },
    )
    start = time.perf_counter()
    with redis_lsh.insertion_session() as session:
        for key, _, mh in signed:
            redis_lsh.query(mh)
            session.insert(key, mh)
    return ours, len(signed) / (time.perf_counter() - start)


PER_DAY = 50_000
WINDOW_DAYS = 30


def synthetic_day(i: int) -> int:
    """50k chunks a day from 2024-01-01: the i-th signature's publication day key."""
    day = dt.date(2024, 1, 1) + dt.timedelta(days=i // PER_DAY)
    return day.year * 10000 + day.month * 100 + day.day


def synthetic_values(n: int, num_perm: int, seed: int = 11) -> np.ndarray:
    """MinHash values of distinct texts are uniform 32-bit values: random ones load the index the same way."""
    return np.random.default_rng(seed).integers(0, 2**32, size=(n, num_perm), dtype=np.uint64).astype(np.uint32)


def replay_figures(settings: Settings, n: int) -> dict:
    """Write n signatures to a fresh compacted log on the local broker, then time a stage's start-up: open the
    log, replay it into a windowed index, ready to decide."""
    options = kafka_options(settings)
    topic = f"bench{uuid.uuid4().hex[:6]}.dedup"
    from newskg.ingest.kafka.admin import TopicAdmin

    TopicAdmin(options).ensure_topics([topic], 3, configs={topic: LOG_TOPIC_CONFIG})
    producer = RecordProducer(options, linger_ms=20)
    values = synthetic_values(n, settings.dedup_num_perm)
    start = time.perf_counter()
    for first in range(0, n, 5000):
        producer.send_all(
            topic,
            [
                (
                    f"c_{i:032x}",
                    DedupSignature(
                        chunk_id=f"c_{i:032x}",
                        article_id=f"a_{i // 10:032x}",
                        num_perm=settings.dedup_num_perm,
                        minhash=base64.b64encode(values[i].astype("<u4").tobytes()).decode(),
                        day=synthetic_day(i),
                    ),
                )
                for i in range(first, min(n, first + 5000))
            ],
        )
    written = time.perf_counter() - start
    del values
    start = time.perf_counter()
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm, WINDOW_DAYS)
    log = SignatureLog(options, topic, producer)
    stats = log.replay(index)
    startup = time.perf_counter() - start
    log.close()
    producer.close()
    return {
        "n": n,
        "write_rate": n / written,
        "replay_rate": stats.read / stats.seconds,
        "startup_s": startup,
        "held": len(index),
    }


def memory_figures(settings: Settings, n: int) -> dict:
    """tracemalloc over an index loaded with n signatures (as a replay loads them), ids and maps included."""
    values = synthetic_values(n, settings.dedup_num_perm, seed=12)
    ids = [f"c_{i:032x}" for i in range(n)]
    articles = [f"a_{i // 10:032x}" for i in range(n)]
    gc.collect()
    tracemalloc.start()
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm, WINDOW_DAYS)
    for i in range(n):
        index.load(ids[i], articles[i], values[i], synthetic_day(i))
    index.settle()
    gc.collect()
    current, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    # ids/article strings were made outside the measured span but the index holds them: count them in
    strings = sum(map(len, ids)) + 49 * n + (sum(map(len, articles)) + 49 * n) / 10
    held = len(index)
    return {
        "n": n,
        "held": held,
        "bytes_per_signature": (current + strings) / held,
        "peak_per_signature": (peak + strings) / held,
        "arrays_per_signature": index.memory_bytes() / held,
    }


def dedup_state(settings: Settings, replay_n: int, memory_n: int) -> tuple[Table, dict[str, Figure]]:
    replay = replay_figures(settings, replay_n)
    memory = memory_figures(settings, memory_n)
    return dedup_state_table(replay, memory), dedup_state_figures(replay, memory)


def dedup_state_figures(replay: dict, memory: dict) -> dict[str, Figure]:
    full = WINDOW_DAYS * PER_DAY
    n = replay["n"]
    return {
        "dedup_log_write_per_s": figure(round(replay["write_rate"]), f"signatures/s through the broker ({n:,})"),
        "dedup_replay_per_s": figure(round(replay["replay_rate"]), f"signatures/s ({n:,})"),
        "dedup_startup_s": figure(round(replay["startup_s"], 2), f"s ({n:,} signatures)"),
        "dedup_startup_s_1m": figure(
            round(replay["startup_s"] * 1_000_000 / n, 1),
            "s, 1,000,000 signatures" + ("" if n == 1_000_000 else f" (extrapolated from {n:,})"),
        ),
        "dedup_bytes_per_signature": figure(round(memory["bytes_per_signature"]), f"B ({memory['held']:,} held)"),
        "dedup_memory_gib_30d": figure(
            round(memory["bytes_per_signature"] * full / 2**30, 2),
            f"GiB, {full:,} signatures"
            + ("" if memory["held"] >= full else f" (extrapolated from {memory['held']:,})"),
        ),
    }


def dedup_state_table(replay: dict, memory: dict) -> Table:
    replay_n = replay["n"]
    table = Table(title=f"dedup state (window {WINDOW_DAYS} days, {PER_DAY:,} chunks/day), this machine")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("note", justify="right")
    label = "measured" if replay_n == 1_000_000 else f"extrapolated from {replay_n:,} measured"
    table.add_row(f"log write through the broker ({replay_n:,} signatures)", f"{replay['write_rate']:,.0f}/s", "")
    table.add_row(
        f"replay rate ({replay_n:,} signatures)",
        f"{replay['replay_rate']:,.0f}/s",
        f"{replay['held']:,} held in the window",
    )
    table.add_row(f"start-up, {replay_n:,} signatures", f"{replay['startup_s']:.1f} s", "measured")
    if replay_n != 1_000_000:
        table.add_row("start-up, 1,000,000 signatures", f"{replay['startup_s'] * 1_000_000 / replay_n:.0f} s", label)
    full = WINDOW_DAYS * PER_DAY
    mem_label = "measured" if memory["held"] >= full else f"extrapolated from {memory['held']:,} measured"
    table.add_row(
        f"index memory per signature ({memory['held']:,} held)",
        f"{memory['bytes_per_signature']:,.0f} B",
        f"numpy arrays {memory['arrays_per_signature']:,.0f} B, peak {memory['peak_per_signature']:,.0f} B",
    )
    table.add_row(
        f"index memory, {WINDOW_DAYS} days x {PER_DAY:,} = {full:,} signatures",
        f"{memory['bytes_per_signature'] * full / 2**30:.2f} GiB",
        mem_label,
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=BUNDLED_PAGES, help="real pages (default: the bundled ones)")
    parser.add_argument("--dedup-only", action="store_true", help="only the dedup state figures (6)")
    parser.add_argument(
        "--replay-signatures",
        type=int,
        default=200_000,
        help="signatures written and replayed through the broker (1,000,000 for the full figure)",
    )
    parser.add_argument(
        "--memory-signatures",
        type=int,
        default=300_000,
        help="signatures loaded for the memory figure (1,500,000 for the full 30 days)",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (tables on stderr)")
    args = parser.parse_args()
    console = Console(width=120, stderr=args.json)
    command = " ".join(["python -m bench.ingest", *sys.argv[1:]])
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(name)s %(message)s")
    logging.getLogger("newskg.ingest.process.signature_log").setLevel(logging.INFO)  # the replay's progress lines
    logging.getLogger("kafka").setLevel(logging.ERROR)
    pages = load_pages(args.pages)
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="bench-ingest-")), _env_file=None)
    manager = ServiceManager(settings)
    manager.up()
    if args.dedup_only:
        try:
            dedup_table, dedup_figures = dedup_state(settings, args.replay_signatures, args.memory_signatures)
        finally:
            manager.down()
        console.print(dedup_table)
        if args.json:
            emit(dedup_figures, command)
        return
    try:
        split_many(["Warm up the sentence model."])
        f1, inproc_rate, chunk_texts = quality_and_speed(pages, settings)
        kafka_rate = end_to_end(pages, settings)
        ours_mh, base_mh = minhash_rates(chunk_texts * 3, settings.dedup_num_perm)
        quality = lsh_quality(chunk_texts, settings.dedup_threshold, settings.dedup_num_perm)
        log_rate, redis_rate = state_stores(chunk_texts, settings)
        dedup_table, dedup_figures = dedup_state(settings, args.replay_signatures, args.memory_signatures)
    finally:
        manager.down()
    if args.json:
        figures = {
            "main_text_f1": figure(round(f1, 3), f"token F1 vs articleBody ({len(pages)} pages; goal >= 0.90)"),
            "process_articles_per_s": figure(round(inproc_rate, 1), "articles/s in-process"),
            "process_kafka_articles_per_s": figure(
                round(kafka_rate, 1), "articles/s through Kafka (baseline: in-process)", round(inproc_rate, 1)
            ),
            "minhash_per_s": figure(
                round(ours_mh), "signatures/s, cached permutations (baseline: datasketch default)", round(base_mh)
            ),
            "dedup_recall": figure(round(quality["recall"], 3), f"exact J >= {settings.dedup_threshold}; goal >= 0.95"),
            "dedup_precision": figure(round(quality["precision"], 3), f"{quality['positives']} true pairs"),
            "dedup_state_chunks_per_s": figure(
                round(log_rate), "chunks/s, LSH + Kafka log (baseline: datasketch redis storage)", round(redis_rate)
            ),
        }
        emit(figures | dedup_figures, command)
    table = Table(title=f"ingestion, {len(pages)} real pages ({len(chunk_texts)} chunks), this machine")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("baseline / goal", justify="right")
    table.add_row("main-text token F1 vs articleBody", f"{f1:.3f}", "goal >= 0.90")
    table.add_row("process stage, in-process (articles/s)", f"{inproc_rate:.1f}", "")
    table.add_row("process stage through Kafka (articles/s)", f"{kafka_rate:.1f}", "")
    table.add_row(
        "MinHash signatures/s (cached permutations)",
        f"{ours_mh:.0f}",
        f"default {base_mh:.0f} ({ours_mh / base_mh:.1f}x)",
    )
    table.add_row(f"dedup recall (exact J >= {settings.dedup_threshold})", f"{quality['recall']:.3f}", "goal >= 0.95")
    table.add_row(
        "dedup precision",
        f"{quality['precision']:.3f}",
        f"{quality['positives']} true pairs in {quality['queries']} queries",
    )
    table.add_row(
        "dedup state: LSH + Kafka log (chunks/s)",
        f"{log_rate:.0f}",
        f"redis storage {redis_rate:.0f} ({log_rate / redis_rate:.1f}x)",
    )
    console.print(table)
    console.print(dedup_table)


if __name__ == "__main__":
    main()
