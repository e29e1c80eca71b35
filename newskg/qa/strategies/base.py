"""A retrieval strategy (NEON §2.2): what it retrieves and how it combines the reads of the Retriever
(qa/retrieve.py), one module each (temporal.py, generic.py, hybrid.py, newsrag.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, get_args

from newskg.core.records import Variant
from newskg.graph.store.asof import AsOf
from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.query_vector import QueryVector
from newskg.qa.similarity import QueryTexts

Strategy = Literal["temporal", "generic", "hybrid", "newsrag"]
STRATEGIES: tuple[Strategy, ...] = get_args(Strategy)


@dataclass(frozen=True)
class Request:
    """One retrieval: the top k as of the day, of one kind of item (and, for interactions, one variant or all)."""

    entity_id: str | None
    query: QueryTexts
    as_of: AsOf
    k: int
    variant: Variant | None
    kind: EvidenceKind
    vector: QueryVector  # embedded once, when a read first needs it, then shared


class Reads(Protocol):
    """The Retriever's reads a strategy combines (qa/retrieve.py)."""

    def window(self, request: Request, entity_id: str, k: int) -> list[Evidence]:
        """The entity's items of the day ranked by similarity, the neighbouring days only to fill k."""
        ...

    def nearest(self, request: Request, entity_id: str | None, k: int) -> list[Evidence]:
        """The mirror's k nearest items to the query, of the entity if one is given."""
        ...

    def fuse(self, request: Request, entity_id: str, temporal: list[Evidence]) -> list[Evidence]:
        """The temporal list and the entity's nearest, fused by reciprocal rank, then diversified (MMR)."""
        ...

    def with_sources(self, found: list[Evidence], as_of: AsOf) -> list[Evidence]:
        """Each item's sources and URLs as of the day."""
        ...


class RetrievalStrategy(Protocol):
    name: Strategy
    # The kind of item it always retrieves, whatever the caller asks for; None: the kind asked for.
    retrieves: EvidenceKind | None

    def retrieve(self, reads: Reads, request: Request) -> list[Evidence]: ...
