"""temporal: the entity's items of the query day ranked by similarity to the query; only when the day holds fewer
than k, the days ±1, ±2 … ±r fill the rest, each ring ranked by similarity too. No entity, no evidence."""

from __future__ import annotations

from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.strategies.base import Reads, Request, Strategy


class Temporal:
    name: Strategy = "temporal"
    retrieves: EvidenceKind | None = None

    def retrieve(self, reads: Reads, request: Request) -> list[Evidence]:
        found = reads.window(request, request.entity_id, request.k) if request.entity_id else []
        # the interaction timeline read already carries the sources as of the day
        return found if request.kind == "interaction" else reads.with_sources(found, request.as_of)
