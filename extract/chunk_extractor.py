"""One chunk → linked entities, `<e>` markup and M0 interactions (the offline default). The LLM variants build
on the same linking and markup (extract/openie/llm_variants.py)."""

from __future__ import annotations

from core.records import Chunk
from extract.entities.linker import Linker, first_seen
from extract.failures import must_stop
from extract.markup import mark_up
from extract.nlp import parse, pipeline, reads, with_sentences
from extract.openie.clauses import extract_clauses
from extract.openie.confidence import FactSignals, confidence, pronouns_in, sentence_shape
from extract.openie.dates import sentence_day
from extract.openie.offline import extract_relations
from extract.result import ChunkExtraction, make_interaction


class ChunkExtractor:
    def __init__(self, linker: Linker, strict_m0: bool = False, min_confidence: float = 0.0):
        self.linker = linker
        self.strict_m0 = strict_m0  # M0's strict rules (NEWSKG_EXTRACT_M0_RULES, extract/openie/checks.py)
        self.min_confidence = min_confidence  # NEWSKG_EXTRACT_MIN_CONFIDENCE: an M0 fact below it is not written

    def parse(self, chunks: list[Chunk]) -> list:
        """One spaCy pass over the batch. If it fails, one text at a time, so one bad text doesn't lose the
        others: its place holds the exception instead of a doc."""
        try:
            return list(parse([c.text for c in chunks], [c.sentences for c in chunks]))
        except Exception as exc:
            if must_stop(exc):
                raise
        docs = []
        for chunk in chunks:
            try:
                docs.append(pipeline()(with_sentences(chunk.text, chunk.sentences)))
            except Exception as exc:
                if must_stop(exc):
                    raise
                docs.append(exc)
        return docs

    def link_one(self, chunk: Chunk, doc) -> ChunkExtraction:
        if not reads(chunk.lang):  # no entities in a language the model was not trained on (extract/nlp.py)
            return ChunkExtraction(chunk, [], [], chunk.text)
        mentions = self.linker.link(doc, chunk.article_id, first_seen(chunk.day, chunk.ingested_ms))
        entities = self.linker.entities(mentions)
        return ChunkExtraction(chunk, mentions, entities, mark_up(chunk.text, mentions), journal=self.linker.journal)

    def add_offline(self, extraction: ChunkExtraction, doc, subjects: set[str] | None = None) -> None:
        """M0: the rule-based interactions of a linked chunk (entity-to-entity paths, then subject-centric clauses),
        dated by the day a sentence states, else the chunk's publication day, each with its confidence."""
        relations = extract_relations(doc, extraction.mentions, subjects, self.strict_m0)
        known = {(r.subject.entity_id, r.text) for r in relations}
        clauses = extract_clauses(doc, extraction.mentions, subjects, known, self.strict_m0)  # subject-centric
        facts = [(r.subject, r.object, r.text, r.sentence, r.rule, r.doubts) for r in relations]
        facts += [(c.subject, None, c.text, c.sentence, c.rule, c.doubts) for c in clauses]
        sentences = list(doc.sents)
        types = {e.id: e.type for e in extraction.entities}
        for subject, obj, text, n, rule, doubts in facts:
            sentence = sentences[n]
            signals = FactSignals(
                rule,
                doubts,
                types.get(subject.entity_id, subject.type),
                len(subject.name.split()),
                text,
                obj is not None,
                sentence_shape(sentence, extraction.chunk.sentence_start + n),
                subject.method,
                pronouns_in(sentence, text),
            )
            score = confidence(signals)
            if score < self.min_confidence:
                continue
            day, _ = sentence_day(sentence, extraction.chunk.day)
            interaction = make_interaction(extraction.chunk, subject, obj, text, day, "M0", rule, score)
            extraction.interactions.append(interaction)
            extraction.signals[interaction.id] = signals

    def link(self, chunks: list[Chunk]) -> list[tuple[ChunkExtraction, object]]:
        """Parse and link a batch (one spaCy pass); returns each extraction with its parsed doc."""
        docs = list(parse([c.text for c in chunks], [c.sentences for c in chunks]))
        return [(self.link_one(chunk, doc), doc) for chunk, doc in zip(chunks, docs, strict=True)]

    def offline(self, chunks: list[Chunk], subjects: set[str] | None = None) -> list[ChunkExtraction]:
        results = []
        for extraction, doc in self.link(chunks):
            self.add_offline(extraction, doc, subjects)
            results.append(extraction)
        return results
