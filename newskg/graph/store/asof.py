"""What "as of D" means, in one place for every read path (README.md, "As of D means as of D").

A fact, chunk or article is *visible as of D* when it was published on or before day D and ingested by the end
of D (UTC). Entities, popularity, timelines, exports and saved queries are all derived from visible items only,
so nothing first seen after D is named.

Two views ("knowledge"):
- ``ingested`` (the default, strict): what the system knew at the end of D, both bounds;
- ``published``: publication day only, also counting what was ingested after D (a historical corpus ingested
  without ``--backfill``). Answers in this view are labelled: it is more than the system knew on D.

The Cypher side is :func:`graph.store.reads.visible` with the parameters of :meth:`AsOf.params`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from newskg.core.timeaxes import day_from_key, day_iso, day_key, end_of_day_ms

Knowledge = Literal["ingested", "published"]
KNOWLEDGE: tuple[Knowledge, ...] = ("ingested", "published")
LATEST_DAY = 99991231  # "now": everything the graph holds (see AsOf.of)
NO_INGESTION_BOUND = end_of_day_ms(LATEST_DAY)


@dataclass(frozen=True)
class AsOf:
    day: int
    knowledge: Knowledge = "ingested"

    def __post_init__(self) -> None:
        if self.knowledge not in KNOWLEDGE:
            raise ValueError(f"knowledge must be one of {', '.join(KNOWLEDGE)}, not {self.knowledge!r}")

    @classmethod
    def of(cls, value: AsOf | int | str | None, knowledge: Knowledge = "ingested") -> AsOf:
        """An AsOf from what callers hold: an AsOf, a yyyymmdd day, an ISO date, or None for "now" — the graph as
        it stands, i.e. everything ingested so far (for real news the same as today: nothing is published in the
        future; the fictional NeoQA stream, dated 2031+, stays visible to a plain `graph timeline`)."""
        if isinstance(value, AsOf):
            return value
        if value is None:
            return cls(LATEST_DAY, knowledge)
        return cls(value if isinstance(value, int) else day_key(value), knowledge)

    @property
    def ms(self) -> int:
        """The ingestion bound: the last millisecond of the day, or none in the publication view."""
        return end_of_day_ms(self.day) if self.knowledge == "ingested" else NO_INGESTION_BOUND

    @property
    def is_latest(self) -> bool:
        return self.day >= LATEST_DAY

    @property
    def iso(self) -> str | None:
        return None if self.is_latest else day_iso(self.day)

    def params(self) -> dict[str, int]:
        return {"as_of_day": self.day, "as_of_ms": self.ms}


def days_between(a: int, b: int) -> int:
    """Calendar days between two yyyymmdd keys (20230301 and 20230228 are 1 apart, not 73)."""
    return abs((day_from_key(a) - day_from_key(b)).days)
