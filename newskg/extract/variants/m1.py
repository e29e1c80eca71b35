"""M1: an LLM call per chunk and target subject (extract/openie/llm_variants.py `run_m1`), for the chunks of the
batch in hand, before the write."""

from __future__ import annotations

from newskg.core.llm.client import LLMClient
from newskg.core.records import Chunk, Variant
from newskg.extract.entities.journal import journal_id
from newskg.extract.failures import EXTRACTION_ERROR, must_stop
from newskg.extract.openie.llm_variants import run_m1
from newskg.extract.result import ChunkExtraction
from newskg.extract.variants.base import ChunkOnly, Failure, Targets, as_of_key


class M1(ChunkOnly):
    variant = Variant.M1

    def __init__(self, llm: LLMClient, targets: Targets):
        self.llm = llm
        self.targets = targets
        self._done: set[str] = set()  # journal ids of the chunks linked, not written yet, with their M1 answer

    def extract(self, extractions: list[ChunkExtraction], failures: list[Failure]) -> list[ChunkExtraction]:
        """M1's interactions for the extractions that have none yet; the targets as of each chunk, this batch's
        own mentions counted (not written yet) — those of a chunk the graph counts already, never: a SIGKILL in
        the middle of a batch write can leave a chunk's mentions written and counted without its journal, and the
        restarted stage links it again (graph/store/mentions.py `counted`). A retried batch keeps the answers."""
        pending = self.targets.pending_counts(extractions)
        keys = sorted({as_of_key(x.chunk) for x in extractions if journal_id(x.chunk) not in self._done})
        subjects = {key: self.targets.subject_ids(*key, pending) for key in keys}
        kept: list[ChunkExtraction] = []
        for x in extractions:  # in the batch's order
            if journal_id(x.chunk) not in self._done:
                try:
                    x.interactions.extend(run_m1(self.llm, x, subjects[as_of_key(x.chunk)]))
                    self._done.add(journal_id(x.chunk))
                except Exception as exc:
                    if must_stop(exc):
                        raise
                    self.forget(x.chunk)
                    failures.append((x.chunk, exc, EXTRACTION_ERROR))
                    continue
            kept.append(x)
        return kept

    def forget(self, chunk: Chunk) -> None:
        self._done.discard(journal_id(chunk))
