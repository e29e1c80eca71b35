"""The extract stage (consumer group `newskg-extract`): chunks → linked entities → interactions (M0, M1 or
M2) → the graph store, in one idempotent write per consumer batch, committed only after that write."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from kafka.consumer.fetcher import ConsumerRecord

from core.records import Chunk, ChunkSighting, Interaction, RecordError, decode_any
from extract.chunk_extractor import ChunkExtractor
from extract.llm.client import LLMClient
from extract.openie.llm_variants import batches, run_m1, run_m2
from extract.openie.targets import MentionStats
from extract.result import ChunkExtraction
from graph.store.store import GraphStore
from ingest.kafka.stage import Stage, StageOutput, dead_letter

log = logging.getLogger(__name__)

GROUP = "newskg-extract"


@dataclass
class ExtractOptions:
    variant: str = "m0"
    subjects: list[str] = field(default_factory=list)  # names; empty: top-N by TF-IDF
    top_n: int = 50
    window_days: int = 7
    m2_batch: int = 5


class ExtractStage(Stage):
    name = "extract"

    def __init__(self, store: GraphStore, extractor: ChunkExtractor, options: ExtractOptions,
                 llm: LLMClient | None = None):
        if options.variant in ("m1", "m2") and llm is None:
            raise ValueError(f"variant {options.variant} needs an LLM endpoint (NEWSKG_LLM_BASE_URL or "
                             "`newskg services up --llm`)")
        self.store = store
        self.extractor = extractor
        self.options = options
        self.llm = llm
        self.mention_stats = MentionStats()

    def handle(self, records: list[ConsumerRecord]) -> StageOutput:
        output = StageOutput()
        chunks: list[Chunk] = []
        sightings: list[ChunkSighting] = []
        for record in records:
            try:
                item = decode_any(record.value or b"")
            except RecordError as exc:
                output.dead.append(dead_letter(record, self.name, exc.reason, str(exc)))
                continue
            if isinstance(item, Chunk):
                chunks.append(item)
            elif isinstance(item, ChunkSighting):
                sightings.append(item)  # a near-duplicate: recorded against the kept chunk, never extracted
            else:
                output.dead.append(dead_letter(record, self.name, "wrong_kind", f"{item.KIND} on the chunks topic"))
        extractions = self.extract(chunks)
        self.store.write_batch(
            chunks=chunks, sightings=sightings,
            entities=[e for x in extractions for e in x.entities],
            mentions=[(x.chunk.id, m.entity_id) for x in extractions for m in x.mentions],
            interactions=[i for x in extractions for i in x.interactions])
        return output

    def extract(self, chunks: list[Chunk]) -> list[ChunkExtraction]:
        if not chunks:
            return []
        if self.options.variant == "m0":
            extractions = self.extractor.offline(chunks)
            for x in extractions:
                self.mention_stats.add(x.chunk.day, {m.entity_id for m in x.mentions})
            return extractions
        extractions = [x for x, _ in self.extractor.link(chunks)]
        for x in extractions:
            self.mention_stats.add(x.chunk.day, {m.entity_id for m in x.mentions})
        subjects = self.subject_ids(max(c.day for c in chunks))
        if self.options.variant == "m1":
            for x in extractions:
                x.interactions.extend(run_m1(self.llm, x, subjects))
        else:
            self._m2(extractions, subjects, max(c.day for c in chunks))
        return extractions

    def subject_ids(self, end_day: int) -> set[str]:
        if self.options.subjects:
            index = self.extractor.linker.index
            found = (index.lookup(name, "PERSON") or index.lookup(name, "ORG") for name in self.options.subjects)
            return {d.entity_id for d in found if d}
        return set(self.mention_stats.top_subjects(self.options.top_n, end_day, self.options.window_days))

    def _m2(self, extractions: list[ChunkExtraction], subjects: set[str], end_day: int) -> None:
        """Pairs of a target subject and an object it co-occurs with (by TF-IDF), over this batch's chunks."""
        pairs = self.mention_stats.top_pairs(subjects, self.options.top_n * 4, end_day, self.options.window_days)
        for subject_id, object_id in pairs:
            both = [x for x in extractions if {subject_id, object_id} <= {m.entity_id for m in x.mentions}]
            for group in batches(both, self.options.m2_batch):
                found: list[Interaction] = run_m2(self.llm, subject_id, object_id, group)
                owner = {c: x for x in group for c in [x.chunk.id]}
                for interaction in found:
                    owner[interaction.chunk_ids[0]].interactions.append(interaction)
