"""Entity figures on the annotated gold set (tests/fixtures/entities/gold.jsonl), and the extract stage's M0
throughput, for issue 16's goals:

  - PERSON and ORG mention recall and precision (exact spans, type right), type accuracy and linking accuracy
    with the default entity rules (what the extract stage runs), each against the plain spaCy model (baseline);
  - on NEON's Doja Cat passage: "Jared Leto" found, and the share of its short forms ("Leto", "Karl",
    "Lagerfeld") linked to their full names;
  - M0 (offline) chunks/s through ChunkExtractor on the deduplicated chunks of the bundled pages, against
    today's figure (`--m0-baseline`); and M0 as a share of spaCy's parse alone in the same run, which depends
    less on how loaded the machine is.
Run: `.venv/bin/python -m bench.entities [--json] [--gold FILE] [--pages DIR]`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.extract import dedup_chunks
from bench.figures import Figure, emit, figure
from bench.ingest import BUNDLED_PAGES, load_pages
from newskg.core.settings import Settings
from newskg.evaluation.entities.gold import DEFAULT_GOLD, GoldDocument, load_gold
from newskg.evaluation.entities.run import evaluate
from newskg.evaluation.entities.scoring import PRF, Scores, score
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.nlp import pipeline

NEON_DOC = "neon-doja-cat"
# Measured on branch wt-h16gold (2026-11-22, best of 3 on the shared 2-core machine at load ~15, rules of b02310d):
# the figures the "no lower than 0.8 of today's" refers to. --m0-baseline compares with another measurement.
TODAY_M0_CHUNKS_PER_S = 10.2
TODAY_M0_SHARE_OF_PARSE = 0.772


def _value(prf: PRF, which: str) -> float:
    value = prf.precision if which == "precision" else prf.recall
    return value if value is not None else 0.0


def quality_figures(final: Scores, plain: Scores) -> dict[str, Figure]:
    figures = {}
    for kind in ("PERSON", "ORG"):
        for which in ("recall", "precision"):
            figures[f"{kind.lower()}_{which}"] = figure(
                round(_value(final.exact[kind], which), 4), "share", round(_value(plain.exact[kind], which), 4)
            )
    for name in ("type_accuracy", "linking_accuracy", "short_form_linking"):
        value, base = getattr(final, name).value, getattr(plain, name).value
        figures[name] = figure(round(value or 0.0, 4), "share", None if base is None else round(base, 4))
    figures["mention_f1"] = figure(
        round(final.exact["all"].f1 or 0.0, 4), "F1, all types", round(plain.exact["all"].f1 or 0.0, 4)
    )
    return figures


def doja_cat_figures(doc: GoldDocument, final, plain) -> dict[str, Figure]:
    """On the NEON passage: how many of the gold "Jared Leto" mentions were found, and short forms linked."""

    def found_leto(result) -> int:
        spans = {(m.start, m.end) for m in result.predictions[doc.id].mentions}
        return sum((m.start, m.end) in spans for m in doc.mentions if m.text == "Jared Leto")

    short = score([doc], {doc.id: final.predictions[doc.id]}).short_form_linking
    short_plain = score([doc], {doc.id: plain.predictions[doc.id]}).short_form_linking
    leto_total = sum(m.text == "Jared Leto" for m in doc.mentions)
    return {
        "doja_jared_leto_found": figure(found_leto(final), f"of {leto_total} mentions", found_leto(plain)),
        "doja_short_forms_linked": figure(
            round(short.value or 0.0, 4), f"share of {short.total} found short forms", short_plain.value
        ),
    }


def _best_rate(count: int, work: Callable[[], object], repeat: int) -> float:
    """The best of `repeat` timed runs: on a shared machine the fastest run is the least disturbed one."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return count / best


def m0_figures(
    pages_dir: Path, baseline_rate: float | None, baseline_share: float | None, repeat: int
) -> dict[str, Figure]:
    # pydantic-settings: its init takes _env_file and every field has a default; pyright sees neither
    settings = Settings(_env_file=None)  # pyright: ignore[reportCallIssue]
    chunks = dedup_chunks(load_pages(pages_dir), settings)
    texts = [c.text for c in chunks]
    pipeline()("warm up")
    parse_rate = _best_rate(len(chunks), lambda: list(pipeline().pipe(texts, batch_size=32)), repeat)
    # A fresh linker each run: every run links the stream from an empty index, as the stage starts.
    m0_rate = _best_rate(len(chunks), lambda: ChunkExtractor(Linker(AliasIndex())).offline(chunks), repeat)
    return {
        "m0_chunks_per_s": figure(round(m0_rate, 2), f"chunks/s ({len(chunks)} chunks)", baseline_rate or None),
        "m0_share_of_parse": figure(round(m0_rate / parse_rate, 3), "M0 rate / spaCy parse rate", baseline_share),
        "spacy_parse_chunks_per_s": figure(round(parse_rate, 2), "chunks/s"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gold", type=Path, default=DEFAULT_GOLD, help="the annotated gold set (JSONL)")
    parser.add_argument("--pages", type=Path, default=BUNDLED_PAGES, help="pages for M0 (default: the bundled ones)")
    parser.add_argument("--m0-baseline", type=float, default=TODAY_M0_CHUNKS_PER_S, help="today's M0 chunks/s")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of M0 and of the parse (best kept)")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure")
    args = parser.parse_args()
    gold = load_gold(args.gold)
    results = list(evaluate(gold))
    plain, final = results[0], results[-1]
    figures = quality_figures(final.scores, plain.scores)
    neon = [d for d in gold if d.id == NEON_DOC]
    if neon:
        figures |= doja_cat_figures(neon[0], final, plain)
    figures |= m0_figures(args.pages, args.m0_baseline, TODAY_M0_SHARE_OF_PARSE or None, args.repeat)
    if args.json:
        emit(figures, " ".join(["python -m bench.entities", *sys.argv[1:]]))
        return
    table = Table(
        title=f"entities: {len(gold)} gold documents, the default rules vs the spaCy model alone; M0 throughput"
    )
    for column in ("figure", "value", "unit", "baseline", "ratio"):
        table.add_column(column, justify="left" if column in ("figure", "unit") else "right")
    for name, f in figures.items():
        table.add_row(name, str(f["value"]), f["unit"], str(f["baseline"] or "—"), str(f["ratio"] or "—"))
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
