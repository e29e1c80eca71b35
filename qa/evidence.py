"""One piece of evidence an answer rests on: an interaction (or a chunk, for NewsRAG) with its days, sources
and retrieval score."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class Evidence:
    id: str
    kind: str  # interaction | chunk
    text: str
    event_day: int
    published_day: int | None = None
    score: float = 0.0
    sources: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    @property
    def n_sources(self) -> int:
        return len(self.sources)

    def as_dict(self) -> dict:
        return asdict(self) | {"n_sources": self.n_sources}
