"""hybrid: the temporal list (2k) and the entity-filtered semantic list fused by reciprocal rank, then
diversified (MMR). Entity-filtered: no entity, no evidence."""

from __future__ import annotations

from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.strategies.base import Reads, Request, Strategy


class Hybrid:
    name: Strategy = "hybrid"
    retrieves: EvidenceKind | None = None

    def retrieve(self, reads: Reads, request: Request) -> list[Evidence]:
        entity_id = request.entity_id
        if not entity_id:
            return []
        fused = reads.fuse(request, entity_id, reads.window(request, entity_id, 2 * request.k))
        return reads.with_sources(fused, request.as_of)
