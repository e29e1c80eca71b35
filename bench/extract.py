"""Extraction figures on the same stream of deduplicated chunks (the 91 real pages):

  1. LLM calls per 100 deduplicated chunks, M1 (one per subject and chunk) against M2 (one per pair and batch
     of k = 5 chunks), the same target subjects (top 10 by mention TF-IDF), cache off. The calls are counted
     by the real LLM client against an endpoint that answers at once (a call's count does not depend on
     what the model says), so the figure is about the method, not the model;
  2. M0 (offline) chunks/s: linking plus dependency-pattern extraction, against spaCy's parse alone
     (baseline, same run).
Run: `make bench` or `.venv/bin/python -m bench.extract [--pages DIR]`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

from bench.figures import emit, figure
from bench.ingest import BUNDLED_PAGES, load_pages, raw_of
from newskg.core.llm.client import LLMClient
from newskg.core.settings import Settings
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.nlp import pipeline
from newskg.extract.openie.llm_variants import EntityRef, M2Snippet, batches, run_m1, run_m2
from newskg.extract.openie.targets import MentionStats
from newskg.ingest.process.article import build_article
from newskg.ingest.process.chunk_articles import chunk_articles

K = 5
TOP_SUBJECTS = 10


def dedup_chunks(pages, settings: Settings):
    """The process stage's chunks of the pages (its own chunk-and-dedup step, ingest/process/chunk_dedup.py)."""
    return chunk_articles([build_article(raw_of(html)) for _, html, _ in pages], settings)


def instant_endpoint() -> httpx.Client:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "id": "b",
                "object": "chat.completion",
                "created": 0,
                "model": "bench",
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": json.dumps({"interactions": []})},
                    }
                ],
                "usage": {"prompt_tokens": len(request.content) // 4, "completion_tokens": 5, "total_tokens": 0},
            },
        )

    return httpx.Client(transport=httpx.MockTransport(answer))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=BUNDLED_PAGES, help="real pages (default: the bundled ones)")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    settings = Settings(_env_file=None)
    pages = load_pages(args.pages)
    chunks = dedup_chunks(pages, settings)
    pipeline()("warm up")

    start = time.perf_counter()
    list(pipeline().pipe([c.text for c in chunks], batch_size=32))
    parse_rate = len(chunks) / (time.perf_counter() - start)
    start = time.perf_counter()
    extractor = ChunkExtractor(Linker(AliasIndex()))
    m0 = extractor.offline(chunks)
    m0_rate = len(chunks) / (time.perf_counter() - start)
    m0_interactions = sum(len(x.interactions) for x in m0)

    linked = [x for x, _ in ChunkExtractor(Linker(AliasIndex())).link(chunks)]
    stats = MentionStats()
    for x in linked:
        stats.add(x.chunk.day, {m.entity_id for m in x.mentions})
    end_day = max(c.day for c in chunks)
    window = 100_000  # the whole stream is one window here
    subjects = set(stats.top_subjects(TOP_SUBJECTS, end_day, window))
    client_m1 = LLMClient("http://bench/v1", "bench", http_client=instant_endpoint())
    for x in linked:
        run_m1(client_m1, x, subjects)
    names = {m.entity_id: m.name for x in linked for m in x.mentions}

    def m2_calls(pairs: list[tuple[str, str]]) -> tuple[int, int]:
        client = LLMClient("http://bench/v1", "bench", http_client=instant_endpoint())
        for s, o in pairs:
            snippets = [M2Snippet(x.chunk, x.marked_text, frozenset(m.entity_id for m in x.mentions)) for x in linked]
            both = [snippet for snippet in snippets if {s, o} <= snippet.entity_ids]
            for group in batches(both, K, key=lambda snippet: snippet.chunk):
                run_m2(client, EntityRef(s, names[s]), EntityRef(o, names[o]), group)
        return client.usage.calls, client.usage.prompt_tokens

    prominent = stats.top_pairs(subjects, 4 * TOP_SUBJECTS, end_day, window)  # the stage's selection
    every_pair = stats.top_pairs(subjects, 10_000, end_day, window)
    (m2_prominent, m2_prompt_tokens), (m2_every, _) = m2_calls(prominent), m2_calls(every_pair)

    per100 = 100 / len(chunks)
    if args.json:
        m1_calls = client_m1.usage.calls * per100
        figures = {
            "m1_calls_per_100_chunks": figure(round(m1_calls, 1), f"LLM calls ({len(subjects)} target subjects)"),
            "m2_calls_per_100_chunks": figure(
                round(m2_prominent * per100, 1), f"LLM calls, k = {K} (baseline: M1)", round(m1_calls, 1)
            ),
            "m2_every_pair_calls_per_100_chunks": figure(
                round(m2_every * per100, 1), "LLM calls, every co-occurring pair (baseline: M1)", round(m1_calls, 1)
            ),
            "m0_vs_parse_chunks_per_s": figure(
                round(m0_rate, 1), "M0 chunks/s (baseline: spaCy parse alone)", round(parse_rate, 1)
            ),
            "m0_interactions_per_100_chunks": figure(round(m0_interactions * per100, 1), "interactions"),
        }
        emit(figures, " ".join(["python -m bench.extract", *sys.argv[1:]]))
    table = Table(title=f"extraction, {len(chunks)} deduplicated chunks of {len(pages)} real pages")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_column("baseline / note", justify="right")
    table.add_row(
        "M1 LLM calls per 100 chunks", f"{client_m1.usage.calls * per100:.1f}", f"{len(subjects)} target subjects"
    )
    table.add_row(
        f"M2 LLM calls per 100 chunks (k = {K})",
        f"{m2_prominent * per100:.1f}",
        f"{len(prominent)} prominent pairs; M1/M2 = {client_m1.usage.calls / max(1, m2_prominent):.2f}x",
    )
    table.add_row(
        "M2, every co-occurring pair",
        f"{m2_every * per100:.1f}",
        f"{len(every_pair)} pairs; M1/M2 = {client_m1.usage.calls / max(1, m2_every):.2f}x",
    )
    table.add_row(
        "M0 offline chunks/s (link + extract)",
        f"{m0_rate:.1f}",
        f"spaCy parse alone {parse_rate:.1f} ({m0_rate / parse_rate:.2f}x)",
    )
    table.add_row("M0 interactions per 100 chunks", f"{m0_interactions * per100:.1f}", "")
    # The capacity table (README "Scaling") prices calls from these: the endpoint counts request bytes / 4 as
    # prompt tokens (JSON framing included), an estimate of what a tokenizer would count.
    table.add_row("chunks per page", f"{len(chunks) / len(pages):.2f}", "deduplicated")
    table.add_row(
        "entities per chunk", f"{sum(len({m.entity_id for m in x.mentions}) for x in linked) / len(chunks):.2f}", ""
    )
    table.add_row("target subjects per chunk (M1 calls per chunk)", f"{client_m1.usage.calls / len(chunks):.3f}", "")
    table.add_row(
        "prompt tokens per call, M1 / M2",
        f"{client_m1.usage.prompt_tokens / max(1, client_m1.usage.calls):.0f} / "
        f"{m2_prompt_tokens / max(1, m2_prominent):.0f}",
        "request bytes / 4",
    )
    Console(width=120, stderr=args.json).print(table)


if __name__ == "__main__":
    main()
