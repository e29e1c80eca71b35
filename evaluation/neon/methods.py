"""NEON's methods as retrieval calls (§3 "Baselines & Methods"): NewsRAG retrieves the top-k news chunks,
NEON(Mx) the top-k interactions of extraction variant Mx only, each under the temporal or the generic strategy,
always as of the replay day (strict view: published and ingested by its end).

This is the one seam between the replay and qa/retrieve.py. When `Retriever.retrieve` takes `variant=`, the
variant filter is the retriever's own; until then the interactions are over-fetched and filtered here by the
variant the graph records for each (so an Mx method never shows another variant's line)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from graph.mirror.qdrant import CHUNKS
from graph.store.asof import AsOf
from qa.evidence import Evidence
from qa.retrieve import Retriever

STRATEGIES = ("temporal", "generic")
OVERFETCH = 4  # interactions read per wanted one when the retriever cannot filter by variant itself


@dataclass(frozen=True)
class Method:
    name: str
    kind: str  # chunk | interaction
    variant: str | None
    default_k: int  # the paper's comparable context: 5 chunks of 5-6 sentences, 10 one-line interactions
    label: str


METHODS = {
    "newsrag": Method("newsrag", "chunk", None, 5, "NewsRAG"),
    "m0": Method("m0", "interaction", "M0", 10, "NEON(M0)"),
    "m1": Method("m1", "interaction", "M1", 10, "NEON(M1)"),
    "m2": Method("m2", "interaction", "M2", 10, "NEON(M2)"),
}


def retriever_filters_variants(retriever: Retriever) -> bool:
    return "variant" in inspect.signature(retriever.retrieve).parameters


def retrieve(
    retriever: Retriever, method: Method, strategy: str, entity_id: str | None, text: str, as_of: AsOf, k: int
) -> list[Evidence]:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    if method.kind == "chunk":
        return _chunks(retriever, strategy, entity_id, text, as_of, k)
    if retriever_filters_variants(retriever):
        # Passed by name through a mapping: today's signature lacks it, the reworked one (qa/) has it.
        return retriever.retrieve(strategy, entity_id, text, as_of, k, **{"variant": method.variant})
    found = retriever.retrieve(strategy, entity_id, text, as_of, k * OVERFETCH)
    variants = {i.id: i.variant for i in retriever.store.interactions([e.id for e in found])}
    return [e for e in found if variants.get(e.id) == method.variant][:k]


def _chunks(
    retriever: Retriever, strategy: str, entity_id: str | None, text: str, as_of: AsOf, k: int
) -> list[Evidence]:
    """Temporal: the entity's chunks nearest the day (the day itself first); generic: the chunks most similar to
    the reformulated query, as interactions' generic strategy ranks them."""
    if strategy == "temporal":
        found = retriever.temporal_chunks(entity_id, as_of, k) if entity_id else []
    else:
        found = retriever.semantic(CHUNKS, text, as_of, k, None)
    return retriever._with_sources(found, as_of)  # the retriever's own as-of source read
