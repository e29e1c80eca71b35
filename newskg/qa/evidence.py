"""One piece of evidence an answer rests on: an interaction (or a chunk, for NewsRAG) with its days, sources,
extraction variant (interactions) and retrieval score (and, for the answer, its similarity to the query)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from newskg.core.records import Variant
from newskg.qa.similarity import Similarity

EvidenceKind = Literal["interaction", "chunk"]


@dataclass
class Evidence:
    id: str
    kind: EvidenceKind
    text: str
    event_day: int
    published_day: int | None = None
    score: float = 0.0
    sources: list[str] = field(default_factory=list[str])
    urls: list[str] = field(default_factory=list[str])
    variant: Variant | None = None
    confidence: float | None = None  # an M0 fact's (extract/openie/confidence.py); None for LLM facts and chunks
    # Its cosine to the query as retrieval scored it (the `score` may be a fused rank instead); not part of the
    # API's evidence: the answer's sentence choice reuses it rather than embedding the text again.
    similarity: Similarity | None = field(default=None, repr=False, compare=False)

    @property
    def n_sources(self) -> int:
        return len(self.sources)

    def as_dict(self) -> dict[str, Any]:
        """The API's evidence: every field but the similarity, plus n_sources. Built field by field, not by
        dataclasses.asdict, which deep-copied each field and was a tenth of a temporal answer's CPU in the API."""
        found: dict[str, Any] = {name: getattr(self, name) for name in _API_FIELDS}
        found["sources"], found["urls"] = list(self.sources), list(self.urls)
        return found | {"n_sources": self.n_sources}


_API_FIELDS = tuple(f.name for f in fields(Evidence) if f.name != "similarity")
