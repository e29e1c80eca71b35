"""M2: an LLM call per target (subject, object) pair over k chunks that mention both, read back from the graph
once a batch is written; the batching, waiting, retries and give-ups are extract/m2_scheduler.py's."""

from __future__ import annotations

from collections.abc import Iterable

from newskg.core.records import Chunk, Variant
from newskg.extract.m2_scheduler import GiveUp, M2Scheduler
from newskg.extract.variants.base import ChunkOnly, Targets


class M2(ChunkOnly):
    variant = Variant.M2

    def __init__(self, scheduler: M2Scheduler, targets: Targets):
        self.scheduler = scheduler
        self.targets = targets

    def after_write(self, touched: list[tuple[Chunk, set[str]]]) -> tuple[GiveUp, ...]:
        # M2 reads its batches back from the graph, so this batch's chunks had to be written first.
        self.scheduler.after_write(self.targets.touched_pairs(touched))
        return self.scheduler.given_up()

    def given_up(self) -> tuple[GiveUp, ...]:
        return self.scheduler.given_up()

    def dead_lettered(self, sent: Iterable[GiveUp]) -> None:
        self.scheduler.dead_lettered(sent)

    def tick(self) -> bool:
        return self.scheduler.tick()

    def on_idle(self) -> bool:
        return self.scheduler.flush_all()
