"""Precision with a 95% Wilson score interval (sound for small samples and for precisions near 0 or 1)."""

from __future__ import annotations

import math

from pydantic import BaseModel

Z95 = 1.959963984540054


class Proportion(BaseModel):
    hits: int
    total: int
    value: float | None
    ci: tuple[float, float] | None

    @classmethod
    def of(cls, hits: int, total: int) -> Proportion:
        if total == 0:
            return cls(hits=0, total=0, value=None, ci=None)
        return cls(hits=hits, total=total, value=round(hits / total, 4), ci=wilson(hits, total))


def wilson(hits: int, total: int, z: float = Z95) -> tuple[float, float]:
    p = hits / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)
