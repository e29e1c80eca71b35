"""What a judge (and an offline proxy) reads: the query, its day, the answer and the evidence the answer was given.

Evidence is structural: anything with `text`, `event_day` and `kind` (qa's `Evidence`, a replay record, a test
tuple), so the judges depend on no retrieval type."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

Attribute = Literal["helpfulness", "relevance", "faithfulness"]
ATTRIBUTES: tuple[Attribute, ...] = ("helpfulness", "relevance", "faithfulness")


class EvidenceLike(Protocol):
    """Read-only, so frozen dataclasses and pydantic models match as well as qa's mutable `Evidence`."""

    @property
    def text(self) -> str: ...

    @property
    def event_day(self) -> int: ...  # yyyymmdd day key

    @property
    def kind(self) -> str: ...  # interaction | chunk


@dataclass(frozen=True)
class EvidenceItem:
    text: str
    event_day: int
    kind: str = "interaction"


@dataclass(frozen=True)
class JudgeCase:
    """One answer to grade. `day` is the query's yyyymmdd day key."""

    query: str
    day: int
    answer: str
    evidence: tuple[EvidenceItem, ...] = ()

    @classmethod
    def of(cls, query: str, day: int, answer: str, evidence: Sequence[EvidenceLike]) -> JudgeCase:
        items = tuple(EvidenceItem(e.text, e.event_day, e.kind) for e in evidence)
        return cls(query, day, answer, items)
