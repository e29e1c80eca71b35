"""The facts and mentions the extract stage makes of a page set, made in process by the stages' own code: the
process stage's article, chunk and dedup step (ingest/process/chunk_articles.py), then the extract stage's
linking and M0 extractor over one alias index (extract/chunk_extractor.py), pages in order, one ingestion instant
apart as a stream would have them. What the graph would state for those pages, without its servers."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from newskg.core.errors import NewskgError
from newskg.core.llm.client import LLMClient
from newskg.core.records import Article, Chunk, Variant
from newskg.core.settings import Settings
from newskg.evaluation.facts.corpus import Corpus, Page
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.openie.confidence import features
from newskg.extract.openie.llm_variants import run_m1
from newskg.extract.result import ChunkExtraction
from newskg.ingest.process.article import build_article
from newskg.ingest.process.chunk_articles import chunk_articles

ENTITY_TYPES = ("PERSON", "ORG")  # the types whose mentions are sampled and labelled


def item_key(text: str, chunk_text: str) -> str:
    """A label's key: the fact's (or mention's) text and its chunk's, so an unchanged fact keeps its label."""
    return hashlib.sha256(f"{text}\x1f{chunk_text}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Fact:
    corpus: Corpus
    page: str
    chunk_id: str
    chunk_text: str
    text: str
    subject: str
    subject_type: str
    object: str | None
    rule: str
    variant: Variant
    features: tuple[float, ...] = ()  # an M0 fact's confidence inputs (extract/openie/confidence.py FEATURES)
    confidence: float | None = None

    @property
    def key(self) -> str:
        return item_key(self.text, self.chunk_text)


@dataclass(frozen=True)
class Mention:
    corpus: Corpus
    page: str
    chunk_text: str
    text: str  # as the chunk spells it
    type: str
    name: str  # the canonical name it was linked to

    @property
    def key(self) -> str:
        return item_key(f"{self.text}\x1e{self.type}", self.chunk_text)


@dataclass
class Extracted:
    facts: list[Fact]
    mentions: list[Mention]
    articles: int
    chunks: int
    skipped: list[str]  # pages the process stage rejected (with why)


def _extract_batch(extractor: ChunkExtractor, chunks: list[Chunk], llm: LLMClient | None) -> list[ChunkExtraction]:
    if llm is None:
        return extractor.offline(chunks)
    linked = [x for x, _ in extractor.link(chunks)]
    for extraction in linked:
        extraction.interactions = run_m1(llm, extraction, {m.entity_id for m in extraction.mentions})
    return linked


def _articles(pages: Sequence[Page]) -> tuple[list[tuple[Page, Article]], list[str]]:
    built: list[tuple[Page, Article]] = []
    skipped: list[str] = []
    for page in pages:
        try:
            built.append((page, build_article(page.raw)))
        except NewskgError as exc:
            skipped.append(f"{page.key}: {exc}")
    return built, skipped


def extract(
    pages: Sequence[Page],
    settings: Settings,
    on_chunks: Callable[[int, int], None] | None = None,
    llm: LLMClient | None = None,
    max_chunks: int | None = None,
) -> Extracted:
    """With the M0 rules `settings.extract_m0_rules` names, as the extract stage would run them; with an `llm`,
    M1's facts instead (one call per subject and chunk, as the stage makes them) over the first `max_chunks`."""
    built, skipped = _articles(pages)
    page_of = {article.id: page for page, article in built}
    chunks: list[Chunk] = chunk_articles([a for _, a in built], settings)[:max_chunks]
    strict = settings.extract_m0_rules == "strict"
    extractor = ChunkExtractor(Linker(AliasIndex()), strict, settings.extract_min_confidence)
    facts: list[Fact] = []
    mentions: list[Mention] = []
    for start in range(0, len(chunks), 32):
        for extraction in _extract_batch(extractor, chunks[start : start + 32], llm):
            page = page_of[extraction.chunk.article_id]
            chunk = extraction.chunk
            types = {e.id: e.type for e in extraction.entities}
            facts += [
                Fact(
                    page.corpus,
                    page.key,
                    chunk.id,
                    chunk.text,
                    i.text,
                    i.subject_name,
                    types.get(i.subject_id, ""),
                    i.object_name,
                    i.rule or i.variant,
                    i.variant,
                    tuple(features(extraction.signals[i.id])) if i.id in extraction.signals else (),
                    i.confidence,
                )
                for i in extraction.interactions
            ]
            mentions += [
                Mention(page.corpus, page.key, chunk.text, m.text, m.type, m.name)
                for m in extraction.mentions
                if m.type in ENTITY_TYPES and not m.is_reference
            ]
        if on_chunks:
            on_chunks(min(start + 32, len(chunks)), len(chunks))  # done, total
    return Extracted(facts, mentions, len(built), len(chunks), skipped)
