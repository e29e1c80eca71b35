"""Ingestion figures: main-text quality, process-stage speed, MinHash speed, LSH quality, dedup state stores.

Prints, on this machine:
  1. main-text token F1 against the gold `articleBody` of the 91 real pages (goal >= 0.90);
  2. process-stage articles/s: in-process (CPU only) and end to end through the local broker;
  3. MinHash signatures/s with cached permutations against datasketch's default (baseline, same run);
  4. recall/precision of the dedup decision (LSH candidates + estimated Jaccard) against exact trigram Jaccard
     >= threshold on a sample of edited copies (goal recall >= 0.95);
  5. the shared dedup state: in-memory LSH + Kafka signature log against datasketch's Redis storage on the
     FalkorDB redis-server (baseline, same run).
Run: `make bench` or `.venv/bin/python -m bench.ingest [--pages DIR]`.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import tempfile
import time
import uuid
from pathlib import Path

from datasketch import MinHash, MinHashLSH
from rich.console import Console
from rich.table import Table

from core.records import RawArticle
from core.settings import Settings
from ingest.kafka.producer import RecordProducer
from ingest.kafka.stage import run_stages
from ingest.process.article import build_article, raw_article_id
from ingest.process.chunking import windows
from ingest.process.dedup import DedupIndex, exact_jaccard
from ingest.process.quality import token_f1
from ingest.process.sentences import split_many
from ingest.process.signature_log import SignatureLog
from newskg.pipeline import build_runners
from newskg.services.manager import ServiceManager
from newskg.wiring import kafka_options

REPO = Path(__file__).resolve().parents[1]
NOW = "2024-01-01T00:00:00Z"
console = Console(width=120)


def load_pages(folder: Path) -> list[tuple[str, str, str]]:
    gold = json.loads((folder / "ground-truth.json").read_text())
    return [(key, gzip.decompress((folder / f"{key}.html.gz").read_bytes()).decode("utf-8", "replace"),
             entry["articleBody"]) for key, entry in sorted(gold.items())]


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
    from ingest.process.dedup import shingles

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
    return {"recall": tp / max(1, tp + fn), "precision": tp / max(1, tp + fp), "queries": queries,
            "positives": tp + fn}


def end_to_end(pages, settings: Settings) -> float:
    options = kafka_options(settings)
    prefix = f"bench{uuid.uuid4().hex[:6]}"
    settings = settings.model_copy(update={f"topic_{k}": f"{prefix}.{k}" for k in
                                           ("articles", "chunks", "dlq", "dedup")})
    runner = build_runners(settings, ["process"])[0]
    producer = RecordProducer(options)
    producer.send_all(settings.topic_articles, [(raw_article_id(raw_of(h)), raw_of(h)) for _, h, _ in pages])
    start = time.perf_counter()
    run_stages([runner], until_idle=True)
    elapsed = time.perf_counter() - start
    runner.close()
    return runner.stats.consumed / elapsed


def state_stores(texts: list[str], settings: Settings) -> tuple[float, float]:
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    signed = [(f"c{i}", "a", index.signer.sign(t)) for i, t in enumerate(texts)]
    options = kafka_options(settings)
    topic = f"bench{uuid.uuid4().hex[:6]}.dedup"
    from ingest.kafka.admin import TopicAdmin

    TopicAdmin(options).ensure_topics([topic], 3)
    producer = RecordProducer(options)
    log = SignatureLog(options, topic, producer)
    start = time.perf_counter()
    for key, article, mh in signed:
        index.decide(key, article, mh)
        index.add(key, article, mh)
    for batch in range(0, len(signed), 64):
        log.append(index, signed[batch:batch + 64])
    ours = len(signed) / (time.perf_counter() - start)
    log.close()
    record = ServiceManager(settings).state.load()["graph"]
    redis_lsh = MinHashLSH(threshold=settings.dedup_threshold, num_perm=settings.dedup_num_perm, storage_config={
        "type": "redis", "basename": f"bench{uuid.uuid4().hex[:6]}".encode(),
        "redis": {"host": record.host, "port": record.port}})
    start = time.perf_counter()
    with redis_lsh.insertion_session() as session:
        for key, _, mh in signed:
            redis_lsh.query(mh)
            session.insert(key, mh)
    return ours, len(signed) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default = REPO.parent / "shared" / "data" / "news-html"
    parser.add_argument("--pages", type=Path, default=default if default.exists() else
                        REPO / "tests" / "fixtures" / "news-html")
    args = parser.parse_args()
    pages = load_pages(args.pages)
    settings = Settings(data_dir=Path(tempfile.mkdtemp(prefix="bench-ingest-")), _env_file=None)
    manager = ServiceManager(settings)
    manager.up()
    try:
        split_many(["Warm up the sentence model."])
        f1, inproc_rate, chunk_texts = quality_and_speed(pages, settings)
        kafka_rate = end_to_end(pages, settings)
        ours_mh, base_mh = minhash_rates(chunk_texts * 3, settings.dedup_num_perm)
        quality = lsh_quality(chunk_texts, settings.dedup_threshold, settings.dedup_num_perm)
        log_rate, redis_rate = state_stores(chunk_texts, settings)
    finally:
        manager.down()
    table = Table(title=f"ingestion, {len(pages)} real pages ({len(chunk_texts)} chunks), this machine")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("baseline / goal", justify="right")
    table.add_row("main-text token F1 vs articleBody", f"{f1:.3f}", "goal >= 0.90")
    table.add_row("process stage, in-process (articles/s)", f"{inproc_rate:.1f}", "")
    table.add_row("process stage through Kafka (articles/s)", f"{kafka_rate:.1f}", "")
    table.add_row("MinHash signatures/s (cached permutations)", f"{ours_mh:.0f}",
                  f"default {base_mh:.0f} ({ours_mh / base_mh:.1f}x)")
    table.add_row(f"dedup recall (exact J >= {settings.dedup_threshold})", f"{quality['recall']:.3f}",
                  "goal >= 0.95")
    table.add_row("dedup precision", f"{quality['precision']:.3f}",
                  f"{quality['positives']} true pairs in {quality['queries']} queries")
    table.add_row("dedup state: LSH + Kafka log (chunks/s)", f"{log_rate:.0f}",
                  f"redis storage {redis_rate:.0f} ({log_rate / redis_rate:.1f}x)")
    console.print(table)


if __name__ == "__main__":
    main()
