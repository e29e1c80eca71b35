"""The process stage's chunk-and-dedup step: an article's sentences → its chunk records, each with the dedup
index's decision (ingest/process/dedup.py), the index told of every kept chunk and sighting. ProcessStage turns the
steps into messages and log entries; `chunk_articles` (ingest/process/chunk_articles.py) keeps the new chunks for
the benches and evaluations that need the stage's chunks in process."""

from __future__ import annotations

from dataclasses import dataclass

from newskg.core.ids import chunk_id
from newskg.core.records import Article, Chunk
from newskg.core.settings import Settings
from newskg.ingest.process.chunking import Window, windows
from newskg.ingest.process.dedup import Decision, DedupIndex, LeanMinHash


@dataclass(frozen=True)
class ChunkStep:
    """One window of an article: its chunk record and signature, the index's decision on it, and whether the index
    took it in (a new chunk kept, or a duplicate's sighting noted; not when it falls outside the index's window):
    only those go to the dedup log."""

    record: Chunk
    signature: LeanMinHash
    decision: Decision
    held: bool


def chunk_and_dedup(article: Article, sentences: list[str], settings: Settings, index: DedupIndex) -> list[ChunkStep]:
    """The article's windows, in order. Every record is built (and validated) before the index is asked or told
    anything, so an article that fails leaves nothing behind in the index."""
    prepared: list[tuple[Chunk, LeanMinHash]] = []
    for window in windows(sentences, settings.chunk_sentences, settings.chunk_stride):
        cid = chunk_id(window.text)
        prepared.append((chunk_record(article, cid, window), index.signer.sign(window.text)))
    steps: list[ChunkStep] = []
    day, ms = article.published_day, article.ingested_ms
    for record, mh in prepared:
        decision = index.decide(record.id, article.id, mh, ms)
        held = False
        if decision.kind == "duplicate":
            held = index.add_sighting(article.id, record.id, decision.chunk_id, day, ms, decision.similarity)
        elif decision.kind == "new":
            held = index.add(record.id, article.id, mh, day, ms)
        steps.append(ChunkStep(record, mh, decision, held))
    return steps


def chunk_record(article: Article, cid: str, window: Window) -> Chunk:
    """The chunk message of a window of an article."""
    return Chunk(
        id=cid,
        text=window.text,
        sentences=window.sentences,
        article_id=article.id,
        article_ids=[article.id],
        **Chunk.provenance_of(article, day=article.published_day),
        sentence_start=window.start,
        sentence_end=window.end,
        lang=article.lang,
    )
