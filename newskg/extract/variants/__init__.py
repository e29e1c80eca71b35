"""The open-IE variants, one module each (M0 m0.py, M1 m1.py, M2 m2.py), behind the protocol the extract stage
calls (base.py `OpenIE`); `open_ie` is the one place that picks one from a Variant."""

from __future__ import annotations

from newskg.core.llm.client import LLMClient
from newskg.core.records import Variant
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.m2_scheduler import M2Scheduler
from newskg.extract.options import ExtractOptions
from newskg.extract.variants.base import OpenIE, Targets
from newskg.extract.variants.m0 import M0
from newskg.extract.variants.m1 import M1
from newskg.extract.variants.m2 import M2
from newskg.graph.mirror.qdrant import VectorMirror
from newskg.graph.store.store import GraphStore

__all__ = ["M0", "M1", "M2", "OpenIE", "Targets", "open_ie"]


def open_ie(
    options: ExtractOptions,
    *,
    extractor: ChunkExtractor,
    targets: Targets,
    store: GraphStore,
    llm: LLMClient | None,
    mirror: VectorMirror | None,
    stage: str,
) -> OpenIE:
    """The implementation of `options.variant`; ValueError for an LLM variant without an LLM endpoint."""
    variant = options.variant
    if variant is Variant.M0:
        return M0(extractor)
    if llm is None:
        raise ValueError(
            f"variant {variant.option} needs an LLM endpoint (NEWSKG_LLM_BASE_URL or `newskg services up --llm`)"
        )
    if variant is Variant.M1:
        return M1(llm, targets)
    index = extractor.linker.index.entities
    scheduler = M2Scheduler(
        store,
        llm,
        lambda entity_id: index[entity_id].name,
        k=options.m2_batch,
        max_wait_s=options.m2_max_wait_s,
        max_tries=options.m2_max_tries,
        mirror=mirror,
        stage=stage,
        topic=options.chunks_topic,
    )
    return M2(scheduler, targets)
