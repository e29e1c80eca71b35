"""M0, the offline default: rule-based interactions of each chunk as it is linked (extract/openie/clauses.py)."""

from __future__ import annotations

from spacy.tokens import Doc

from newskg.core.records import Variant
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.result import ChunkExtraction
from newskg.extract.variants.base import ChunkOnly


class M0(ChunkOnly):
    variant = Variant.M0

    def __init__(self, extractor: ChunkExtractor):
        self.extractor = extractor

    def on_linked(self, extraction: ChunkExtraction, doc: Doc) -> None:
        self.extractor.add_offline(extraction, doc)
