"""The extract stage (consumer group `newskg-extract`): chunks → linked entities → interactions (M0, M1 or
M2) → the graph store, in one idempotent write per consumer batch, committed only after that write."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field

from kafka.consumer.fetcher import ConsumerRecord

from core.records import Chunk, ChunkSighting, RecordError, decode_any
from extract.chunk_extractor import ChunkExtractor
from extract.llm.client import LLMClient
from extract.openie.llm_variants import EntityRef, batches, run_m1, run_m2
from extract.openie.targets import GraphMentionStats
from extract.result import ChunkExtraction
from graph.mirror.qdrant import VectorMirror
from graph.mirror.sync import mirror_from_graph
from graph.store.mentions import ingested_day
from graph.store.store import GraphStore
from ingest.kafka.stage import Stage, StageOutput, dead_letter

log = logging.getLogger(__name__)

GROUP = "newskg-extract"


def as_of_key(chunk: Chunk) -> tuple[int, int]:
    """(publication day, ingestion day) of a chunk: what its target selection is computed as of."""
    return chunk.day, ingested_day(chunk.ingested_ms)


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
                 llm: LLMClient | None = None, mirror: VectorMirror | None = None):
        if options.variant in ("m1", "m2") and llm is None:
            raise ValueError(f"variant {options.variant} needs an LLM endpoint (NEWSKG_LLM_BASE_URL or "
                             "`newskg services up --llm`)")
        self.store = store
        self.extractor = extractor
        self.options = options
        self.llm = llm
        self.mirror = mirror
        self.owns_mirror = True  # False when a shared mirror is lent (serve --pipeline)
        self.mention_stats = GraphMentionStats(store.conn)  # the graph's daily counts: replicas agree
        self._open_pairs: set[tuple[str, str]] = set()  # pairs with a remainder shorter than k

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
            chunks=chunks, sightings=sightings, marked={x.chunk.id: x.marked_text for x in extractions},
            entities=[e for x in extractions for e in x.entities],
            mentions=[(x.chunk.id, m.entity_id) for x in extractions for m in x.mentions],
            interactions=[i for x in extractions for i in x.interactions])
        if self.mirror:  # right after the graph write, same step: a failure here means no commit, a re-delivery
            mirror_from_graph(self.store, self.mirror, (i.id for x in extractions for i in x.interactions),
                              (x.chunk.id for x in extractions))
        if self.options.variant == "m2" and extractions:
            # M2 reads its batches back from the graph, so this batch's chunks had to be written first.
            self._m2(self._touched_pairs(extractions), full_only=True)
        return output

    def extract(self, chunks: list[Chunk]) -> list[ChunkExtraction]:
        """Linking for every variant; M0 and M1 interactions here (M2 runs over the graph, see _m2)."""
        if not chunks:
            return []
        if self.options.variant == "m0":
            extractions = self.extractor.offline(chunks)
        else:
            extractions = [x for x, _ in self.extractor.link(chunks)]
        if self.options.variant == "m1":
            # The targets as of each chunk, this batch's own mentions counted (not written yet).
            pending = [(*as_of_key(x.chunk), {m.entity_id for m in x.mentions}) for x in extractions]
            subjects = {key: self.subject_ids(*key, pending) for key in sorted({as_of_key(c) for c in chunks})}
            for x in extractions:
                x.interactions.extend(run_m1(self.llm, x, subjects[as_of_key(x.chunk)]))
        return extractions

    def close(self) -> None:
        if self.mirror and self.owns_mirror:
            self.mirror.close()  # releases the local Qdrant folder for the next process

    def subject_ids(self, end_day: int, ingested_by: int,
                    pending: Iterable[tuple[int, int, set[str]]] = ()) -> set[str]:
        """Target subjects as of a chunk published on end_day and ingested on ingested_by (see targets.py)."""
        if self.options.subjects:
            index = self.extractor.linker.index
            found = (index.lookup(name, "PERSON") or index.lookup(name, "ORG") for name in self.options.subjects)
            return {d.entity_id for d in found if d}
        return set(self.mention_stats.top_subjects(self.options.top_n, end_day, self.options.window_days,
                                                   ingested_by, pending))

    def _touched_pairs(self, extractions: list[ChunkExtraction]) -> list[tuple[str, str]]:
        """Target pairs (subject, co-occurring object) by TF-IDF that this batch's chunks mention, ranked as of
        each chunk (grouped by its day and ingestion day, so batch boundaries change nothing)."""
        pairs: dict[tuple[str, str], None] = {}
        for key in sorted({as_of_key(x.chunk) for x in extractions}):
            subjects = self.subject_ids(*key)
            ranked = self.mention_stats.top_pairs(subjects, self.options.top_n * 4, key[0],
                                                  self.options.window_days, key[1])
            present = [{m.entity_id for m in x.mentions} for x in extractions if as_of_key(x.chunk) == key]
            pairs.update((p, None) for p in ranked if any(set(p) <= ids for ids in present))
        return list(pairs)

    def _m2(self, pairs: list[tuple[str, str]], full_only: bool) -> bool:
        """For each pair: its chunks no M2 batch has covered yet, oldest first, in batches of k; one call per
        batch. During the stream only full batches go out; at idle the remainders do too."""
        index = self.extractor.linker.index.entities
        did = False
        for subject_id, object_id in pairs:
            pair = f"{subject_id}|{object_id}"
            groups = batches(self.store.m2_pending(subject_id, object_id, pair), self.options.m2_batch,
                             key=lambda item: item[0])
            if full_only and groups and len(groups[-1]) < self.options.m2_batch:
                groups.pop()  # the remainder waits for more chunks, or for idle
                self._open_pairs.add((subject_id, object_id))
            subject = EntityRef(subject_id, index[subject_id].name)
            obj = EntityRef(object_id, index[object_id].name)
            for group in groups:
                found = run_m2(self.llm, subject, obj, group)
                self.store.write_batch(interactions=found, m2_batches=[(pair, [c.id for c, _ in group])])
                if self.mirror:
                    mirror_from_graph(self.store, self.mirror, (i.id for i in found))
                did = True
        return did

    def on_idle(self) -> bool:
        """The stream has caught up: the pairs' last, shorter batches go out too."""
        if self.options.variant != "m2" or not self._open_pairs:
            return False
        pairs, self._open_pairs = sorted(self._open_pairs), set()
        return self._m2(pairs, full_only=False)
