"""One chunk → linked entities, `<e>` markup and M0 interactions (the offline default). The LLM variants build
on the same linking and markup (extract/openie/llm_variants.py)."""

from __future__ import annotations

from typing import NamedTuple

from spacy.tokens import Doc

from newskg.core.records import Chunk, Variant
from newskg.extract.entities.linker import LinkedMention, Linker, first_seen
from newskg.extract.failures import must_stop
from newskg.extract.markup import mark_up
from newskg.extract.nlp import parse, pipeline, reads, with_sentences
from newskg.extract.openie.clauses import Clause, extract_clauses
from newskg.extract.openie.confidence import FactSignals, confidence, pronouns_in
from newskg.extract.openie.dates import sentence_day
from newskg.extract.openie.offline import Relation, extract_relations
from newskg.extract.openie.parse import mention_tokens
from newskg.extract.openie.sentence_text import sentence_text
from newskg.extract.result import ChunkExtraction, ExtractedBy, make_interaction
from newskg.extract.sentence_shape import sentence_shape


class _Fact(NamedTuple):
    """One M0 fact before it is an Interaction: a pair relation or a subject-centric clause."""

    subject: LinkedMention
    object: LinkedMention | None
    text: str
    whole: bool  # the text is its whole sentence (sentence_text.py)
    sentence: int
    rule: str
    doubts: frozenset[str]


class ChunkExtractor:
    def __init__(
        self, linker: Linker, strict_m0: bool = False, min_confidence: float = 0.0, whole_sentences: bool = True
    ):
        self.linker = linker
        # A fact's text is its sentence when that stands alone (sentence_text.py); False: always the clause (the
        # clause rules' own tests read those).
        self.whole_sentences = whole_sentences
        self.strict_m0 = strict_m0  # M0's strict rules (NEWSKG_EXTRACT_M0_RULES, extract/openie/checks.py)
        self.min_confidence = min_confidence  # NEWSKG_EXTRACT_MIN_CONFIDENCE: an M0 fact below it is not written

    def parse(self, chunks: list[Chunk]) -> list[Doc | Exception]:
        """One spaCy pass over the batch. If it fails, one text at a time, so one bad text doesn't lose the
        others: its place holds the exception instead of a doc."""
        try:
            return list(parse([c.text for c in chunks], [c.sentences for c in chunks]))
        except Exception as exc:
            if must_stop(exc):
                raise
        docs: list[Doc | Exception] = []
        for chunk in chunks:
            try:
                docs.append(pipeline()(with_sentences(chunk.text, chunk.sentences)))
            except Exception as exc:
                if must_stop(exc):
                    raise
                docs.append(exc)
        return docs

    def link_one(self, chunk: Chunk, doc: Doc) -> ChunkExtraction:
        if not reads(chunk.lang):  # no entities in a language the model was not trained on (extract/nlp.py)
            return ChunkExtraction(chunk, [], [], chunk.text)
        mentions = self.linker.link(doc, chunk.article_id, first_seen(chunk.day, chunk.ingested_ms))
        entities = self.linker.entities(mentions)
        return ChunkExtraction(chunk, mentions, entities, mark_up(chunk.text, mentions), journal=self.linker.journal)

    def add_offline(self, extraction: ChunkExtraction, doc: Doc, subjects: set[str] | None = None) -> None:
        """M0: the rule-based interactions of a linked chunk (entity-to-entity paths, then subject-centric clauses),
        dated by the day a sentence states, else the chunk's publication day, each with its confidence."""
        relations = extract_relations(doc, extraction.mentions, subjects, self.strict_m0)
        known = {(r.subject.entity_id, r.text) for r in relations}
        clauses = extract_clauses(doc, extraction.mentions, subjects, known, self.strict_m0)  # subject-centric
        facts = [_Fact(r.subject, r.object, *self._text(doc, r), r.sentence, r.rule, r.doubts) for r in relations]
        facts += [_Fact(c.subject, None, *self._text(doc, c), c.sentence, c.rule, c.doubts) for c in clauses]
        facts = _once(facts)
        sentences = list(doc.sents)
        types = {e.id: e.type for e in extraction.entities}
        for subject, obj, text, whole, n, rule, doubts in facts:
            sentence = sentences[n]
            signals = FactSignals(
                rule,
                doubts,
                types.get(subject.entity_id, subject.type),
                len(subject.name.split()),
                text,
                obj is not None,
                sentence_shape(sentence, extraction.chunk.sentence_start + n),
                pronouns_in(sentence, text),
                whole,
            )
            score = confidence(signals)
            if score < self.min_confidence:
                continue
            day, _ = sentence_day(sentence, extraction.chunk.day)
            interaction = make_interaction(
                extraction.chunk, subject, obj, text, day, ExtractedBy(Variant.M0, rule, score)
            )
            extraction.interactions.append(interaction)
            extraction.signals[interaction.id] = signals

    def _text(self, doc: Doc, fact: Relation | Clause) -> tuple[str, bool]:
        """The fact's sentence when it stands alone, else its clause (extract/openie/sentence_text.py); and whether
        it is the whole sentence."""
        whole = None
        if self.whole_sentences:
            whole = sentence_text(doc[fact.verb], mention_tokens(doc, fact.subject), fact.subject.name)
        return (whole, True) if whole else (fact.text, False)

    def link(self, chunks: list[Chunk]) -> list[tuple[ChunkExtraction, Doc]]:
        """Parse and link a batch (one spaCy pass); returns each extraction with its parsed doc."""
        docs = list(parse([c.text for c in chunks], [c.sentences for c in chunks]))
        return [(self.link_one(chunk, doc), doc) for chunk, doc in zip(chunks, docs, strict=True)]

    def offline(self, chunks: list[Chunk], subjects: set[str] | None = None) -> list[ChunkExtraction]:
        results: list[ChunkExtraction] = []
        for extraction, doc in self.link(chunks):
            self.add_offline(extraction, doc, subjects)
            results.append(extraction)
        return results


def _once(facts: list[_Fact]) -> list[_Fact]:
    """One fact per subject, object and text: two verbs of one sentence give it once, and a subject clause whose
    sentence is already a pair fact of that subject adds nothing."""
    paired = {(f.subject.entity_id, f.text) for f in facts if f.object is not None}
    seen: set[tuple[str, str | None, str]] = set()
    kept: list[_Fact] = []
    for fact in facts:
        key = (fact.subject.entity_id, fact.object.entity_id if fact.object is not None else None, fact.text)
        if key in seen or (fact.object is None and (key[0], fact.text) in paired):
            continue
        seen.add(key)
        kept.append(fact)
    return kept
