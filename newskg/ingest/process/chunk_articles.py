"""The process stage's chunk-and-dedup step without Kafka: articles in, the chunks the stage would emit out (new
chunks only; near-duplicates of a chunk already kept are dropped as the stage turns them into sightings). For
benches and evaluations that need the stage's chunks in process: the step itself is the stage's
(ingest/process/chunk_dedup.chunk_and_dedup)."""

from __future__ import annotations

from collections.abc import Sequence

from newskg.core.records import Article, Chunk
from newskg.core.settings import Settings
from newskg.ingest.process.chunk_dedup import chunk_and_dedup
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.sentences import split_many


def chunk_articles(articles: Sequence[Article], settings: Settings, index: DedupIndex | None = None) -> list[Chunk]:
    index = index or DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    chunks: list[Chunk] = []
    sentence_lists = split_many([a.text for a in articles]) if articles else []
    for article, sentences in zip(articles, sentence_lists, strict=True):
        steps = chunk_and_dedup(article, sentences, settings, index)
        chunks += [step.record for step in steps if step.decision.kind == "new"]
    return chunks
