"""newsrag: the hybrid fusion over chunks, always (kept for the API; the NEON methods are qa/retrieve.py
`retrieve_method`): whatever kind of item the caller asks for, it retrieves chunks, of no variant."""

from __future__ import annotations

from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.strategies.base import Reads, Request, Strategy
from newskg.qa.strategies.hybrid import Hybrid


class NewsRAG:
    name: Strategy = "newsrag"
    retrieves: EvidenceKind | None = "chunk"

    def retrieve(self, reads: Reads, request: Request) -> list[Evidence]:
        return Hybrid().retrieve(reads, request)
