"""One chunk → linked entities, `<e>` markup and M0 interactions (the offline default). The LLM variants build
on the same linking and markup (extract/openie/llm_variants.py)."""

from __future__ import annotations

from core.records import Chunk
from extract.entities.linker import Linker, first_seen
from extract.failures import must_stop
from extract.markup import mark_up
from extract.nlp import pipeline
from extract.openie.clauses import extract_clauses
from extract.openie.dates import sentence_day
from extract.openie.offline import extract_relations
from extract.result import ChunkExtraction, make_interaction


class ChunkExtractor:
    def __init__(self, linker: Linker):
        self.linker = linker

    def parse(self, chunks: list[Chunk]) -> list:
        """One spaCy pass over the batch. If it fails, one text at a time, so one bad text doesn't lose the
        others: its place holds the exception instead of a doc."""
        texts = [c.text for c in chunks]
        try:
            return list(pipeline().pipe(texts, batch_size=32))
        except Exception as exc:
            if must_stop(exc):
                raise
        docs = []
        for text in texts:
            try:
                docs.append(pipeline()(text))
            except Exception as exc:
                if must_stop(exc):
                    raise
                docs.append(exc)
        return docs

    def link_one(self, chunk: Chunk, doc) -> ChunkExtraction:
        mentions = self.linker.link(doc, chunk.article_id, first_seen(chunk.day, chunk.ingested_ms))
        entities = self.linker.entities(mentions)
        return ChunkExtraction(chunk, mentions, entities, mark_up(chunk.text, mentions), journal=self.linker.journal)

    def add_offline(self, extraction: ChunkExtraction, doc, subjects: set[str] | None = None) -> None:
        """M0: the rule-based interactions of a linked chunk (entity-to-entity paths, then subject-centric clauses),
        dated by the day a sentence states, else the
        chunk's publication day."""
        sentences = list(doc.sents)
        relations = extract_relations(doc, extraction.mentions, subjects)
        for relation in relations:
            day, _ = sentence_day(sentences[relation.sentence], extraction.chunk.day)
            extraction.interactions.append(
                make_interaction(
                    extraction.chunk, relation.subject, relation.object, relation.text, day, "M0", relation.rule
                )
            )
        known = {r.text for r in relations}
        for clause in extract_clauses(doc, extraction.mentions, subjects, known):  # subject-centric facts
            day, _ = sentence_day(sentences[clause.sentence], extraction.chunk.day)
            extraction.interactions.append(
                make_interaction(extraction.chunk, clause.subject, None, clause.text, day, "M0", clause.rule)
            )

    def link(self, chunks: list[Chunk]) -> list[tuple[ChunkExtraction, object]]:
        """Parse and link a batch (one spaCy pass); returns each extraction with its parsed doc."""
        docs = list(pipeline().pipe([c.text for c in chunks], batch_size=32))
        return [(self.link_one(chunk, doc), doc) for chunk, doc in zip(chunks, docs, strict=True)]

    def offline(self, chunks: list[Chunk], subjects: set[str] | None = None) -> list[ChunkExtraction]:
        results = []
        for extraction, doc in self.link(chunks):
            self.add_offline(extraction, doc, subjects)
            results.append(extraction)
        return results
