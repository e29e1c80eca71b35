"""What the extract stage is configured with (newskg/pipeline.py `extract_options` fills it from the settings)."""

from __future__ import annotations

from dataclasses import dataclass, field

from newskg.core.records import Variant


@dataclass
class ExtractOptions:
    variant: Variant = Variant.M0  # "m0"… is taken too (Variant.parse)
    subjects: list[str] = field(default_factory=list[str])  # names; empty: top-N by TF-IDF
    top_n: int = 50
    window_days: int = 7
    m2_batch: int = 5
    m2_max_wait_s: float = 600.0  # a shorter M2 remainder goes out once its oldest chunk waited this long
    m2_max_tries: int = 3  # an M2 batch that keeps failing is dead-lettered after this many tries
    chunks_topic: str = ""  # named in the dead letters of M2 batches (which come from no single message)
    # The shared dedup log (ingest/process/signature_log.py): a chunk dead-lettered here is released there, with
    # its dead letter. Empty: no release is written (tests, `extract text`).
    dedup_topic: str = ""

    def __post_init__(self) -> None:
        self.variant = Variant.parse(self.variant)
