"""generic: the k items most similar to the query in the mirror (no entity filter: the reformulated query names
the entity and its words)."""

from __future__ import annotations

from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.strategies.base import Reads, Request, Strategy


class Generic:
    name: Strategy = "generic"
    retrieves: EvidenceKind | None = None

    def retrieve(self, reads: Reads, request: Request) -> list[Evidence]:
        return reads.with_sources(reads.nearest(request, None, request.k), request.as_of)
