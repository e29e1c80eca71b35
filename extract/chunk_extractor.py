"""One chunk → linked entities, `<e>` markup and M0 interactions (the offline default). The LLM variants build
on the same linking and markup (extract/openie/m1.py, m2.py)."""

from __future__ import annotations

from core.records import Chunk
from extract.entities.linker import Linker, first_seen
from extract.markup import mark_up
from extract.nlp import pipeline
from extract.openie.dates import sentence_day
from extract.openie.offline import extract_relations
from extract.result import ChunkExtraction, make_interaction


class ChunkExtractor:
    def __init__(self, linker: Linker):
        self.linker = linker

    def link(self, chunks: list[Chunk]) -> list[tuple[ChunkExtraction, object]]:
        """Parse and link a batch (one spaCy pass); returns each extraction with its parsed doc."""
        docs = list(pipeline().pipe([c.text for c in chunks], batch_size=32))
        out = []
        for chunk, doc in zip(chunks, docs, strict=True):
            mentions = self.linker.link(doc, chunk.article_id, first_seen(chunk.day, chunk.ingested_ms))
            extraction = ChunkExtraction(chunk, mentions, self.linker.entities(mentions), mark_up(chunk.text, mentions))
            out.append((extraction, doc))
        return out

    def offline(self, chunks: list[Chunk], subjects: set[str] | None = None) -> list[ChunkExtraction]:
        results = []
        for extraction, doc in self.link(chunks):
            sentences = list(doc.sents)
            for relation in extract_relations(doc, extraction.mentions, subjects):
                day, _ = sentence_day(sentences[relation.sentence], extraction.chunk.day)
                extraction.interactions.append(make_interaction(extraction.chunk, relation.subject, relation.object,
                                                                relation.text, day, "M0"))
            results.append(extraction)
        return results
