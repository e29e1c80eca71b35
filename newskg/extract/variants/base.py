"""What the extract stage asks of an open-IE variant, at its fixed points, and what a variant may ask of the stage.

The stage (extract/stage.py) links every chunk the same way; the variant adds the interactions:
- `on_linked`: one chunk just linked, inside the batch's linker transaction (M0: the rules over its parse);
- `extract`: the batch's linked chunks, before the write (M1: one LLM call per chunk and subject);
- `after_write`: the chunks the batch wrote, with the entities each mentions (M2: the pairs' full batches);
- `tick` / `on_idle`: the stage's clock and the stream caught up (M2: remainders and retries);
- `given_up` / `dead_lettered`: M2 batches given up, and their dead letters on the broker.
Which variant runs is chosen once, from the Variant (extract/variants/__init__.py `open_ie`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol

from spacy.tokens import Doc

from newskg.core.records import Chunk, Variant
from newskg.extract.m2_scheduler import GiveUp
from newskg.extract.result import ChunkExtraction
from newskg.graph.store.mentions import ingested_day

# (chunk, exception, dead-letter reason) of a chunk that failed; the stage forgets it and dead-letters it
Failure = tuple[Chunk, BaseException, str]
# chunk id -> (day, ingestion day, entity ids) of the batch's mentions the graph does not count yet
Pending = dict[str, tuple[int, int, set[str]]]


def as_of_key(chunk: Chunk) -> tuple[int, int]:
    """(publication day, ingestion day) of a chunk: what its target selection is computed as of."""
    return chunk.day, ingested_day(chunk.ingested_ms)


class Targets(Protocol):
    """The stage's target selection, as of a chunk (extract/openie/targets.py), for the LLM variants."""

    def subject_ids(
        self, end_day: int, ingested_by: int, pending: Mapping[str, tuple[int, int, set[str]]] | None = None
    ) -> set[str]: ...

    def pending_counts(self, extractions: list[ChunkExtraction]) -> Pending: ...

    def touched_pairs(self, chunks: list[tuple[Chunk, set[str]]]) -> list[tuple[str, str]]: ...


class OpenIE(Protocol):
    """One extraction variant, as the extract stage calls it."""

    variant: Variant

    def on_linked(self, extraction: ChunkExtraction, doc: Doc) -> None:
        """A chunk just linked (its parse `doc`): interactions that need nothing beyond the chunk."""
        ...

    def extract(self, extractions: list[ChunkExtraction], failures: list[Failure]) -> list[ChunkExtraction]:
        """The batch's linked chunks, in order: those kept, with their interactions; a chunk that fails is
        appended to `failures` and left out."""
        ...

    def forget(self, chunk: Chunk) -> None:
        """The chunk is written or dead-lettered: nothing about it is kept for a retried batch."""
        ...

    def after_write(self, touched: list[tuple[Chunk, set[str]]]) -> tuple[GiveUp, ...]:
        """The batch's chunks are in the graph: work over the graph; returns the batches given up so far."""
        ...

    def given_up(self) -> tuple[GiveUp, ...]: ...

    def dead_lettered(self, sent: Iterable[GiveUp]) -> None: ...

    def tick(self) -> bool: ...

    def on_idle(self) -> bool: ...


class ChunkOnly:
    """The defaults of a variant that works chunk by chunk (nothing over the graph, nothing given up)."""

    def on_linked(self, extraction: ChunkExtraction, doc: Doc) -> None:
        return None

    def extract(self, extractions: list[ChunkExtraction], failures: list[Failure]) -> list[ChunkExtraction]:
        return extractions

    def forget(self, chunk: Chunk) -> None:
        return None

    def after_write(self, touched: list[tuple[Chunk, set[str]]]) -> tuple[GiveUp, ...]:
        return ()

    def given_up(self) -> tuple[GiveUp, ...]:
        return ()

    def dead_lettered(self, sent: Iterable[GiveUp]) -> None:
        return None

    def tick(self) -> bool:
        return False

    def on_idle(self) -> bool:
        return False
