"""NEON's methods as retrieval calls (§3 "Baselines & Methods"): NewsRAG retrieves the top-k news chunks,
NEON(Mx) the top-k interactions of extraction variant Mx only, each under the temporal or the generic strategy,
always as of the replay day (strict view: published and ingested by its end).

This is the one seam between the replay and qa/retrieve.py: the retriever owns the methods (which collection,
which variant, the default k), this module only names them for the report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from newskg.core.records import Variant
from newskg.graph.store.asof import AsOf
from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.retrieve import METHOD_K, METHOD_VARIANT, Method, Retriever
from newskg.qa.similarity import QueryTexts

NeonStrategy = Literal["temporal", "generic"]
STRATEGIES: tuple[NeonStrategy, ...] = ("temporal", "generic")


@dataclass(frozen=True)
class MethodSpec:
    name: Method
    kind: EvidenceKind
    variant: Variant | None
    default_k: int  # the paper's comparable context: 5 chunks of 5-6 sentences, 10 one-line interactions
    label: str


def _spec(name: Method, label: str) -> MethodSpec:
    kind: EvidenceKind = "chunk" if name == "newsrag" else "interaction"
    return MethodSpec(name, kind, METHOD_VARIANT[name], METHOD_K[name], label)


METHODS: dict[str, MethodSpec] = {
    "newsrag": _spec("newsrag", "NewsRAG"),
    "m0": _spec("m0", "NEON(M0)"),
    "m1": _spec("m1", "NEON(M1)"),
    "m2": _spec("m2", "NEON(M2)"),
}


def retrieve(
    retriever: Retriever,
    method: MethodSpec,
    strategy: str,
    entity_id: str | None,
    text: str | QueryTexts,
    as_of: AsOf,
    k: int,
) -> list[Evidence]:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    chosen: NeonStrategy = "temporal" if strategy == "temporal" else "generic"
    return retriever.retrieve_method(method.name, chosen, entity_id, text, as_of, k)
