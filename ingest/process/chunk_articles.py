"""The process stage's chunk-and-dedup step without Kafka: articles in, the chunks the stage would emit out (new
chunks only; near-duplicates of a chunk already kept are dropped as the stage turns them into sightings). For
benches and evaluations that need the stage's chunks in process."""

from __future__ import annotations

from collections.abc import Sequence

from core.ids import chunk_id
from core.records import Article, Chunk
from core.settings import Settings
from ingest.process.chunking import windows
from ingest.process.dedup import DedupIndex
from ingest.process.sentences import split_many
from ingest.process.stage import chunk_record


def chunk_articles(articles: Sequence[Article], settings: Settings, index: DedupIndex | None = None) -> list[Chunk]:
    index = index or DedupIndex(settings.dedup_threshold, settings.dedup_num_perm)
    chunks: list[Chunk] = []
    sentence_lists = split_many([a.text for a in articles]) if articles else []
    for article, sentences in zip(articles, sentence_lists, strict=True):
        for window in windows(sentences, settings.chunk_sentences, settings.chunk_stride):
            cid = chunk_id(window.text)
            signature = index.signer.sign(window.text)
            if index.decide(cid, article.id, signature, article.ingested_ms).kind != "new":
                continue
            index.add(cid, article.id, signature, article.published_day, article.ingested_ms)
            chunks.append(chunk_record(article, cid, window))
    return chunks
