"""Spike days (NEON §3): a daily count series → its trailing rolling sum over `window` days → a spike on every day
whose rolling sum exceeds mean + `sigma` × standard deviation of the rolling sums. In core: the NEON evaluation
and the explorer (qa/explore.py, which may not import evaluation/) share this one rule.

Exactly, as implemented:
- the series is dense: every day from the first to the last day of the period, missing days count 0;
- the rolling sum of day d is the sum of days d-window+1 … d; it exists only where the whole window lies in the
  period, so the first window-1 days have none, are never spikes and do not enter the mean or deviation;
- the deviation is the sample one (n - 1 in the denominator, as pandas' `std()`); fewer than two rolling sums: no
  threshold and no spikes;
- "exceeds" is strict: a rolling sum equal to the threshold is not a spike. The comparison is exact (the sums are
  integers, so mean and variance are computed as fractions and compared squared), so a tie is a tie, never a float
  rounding accident; a flat series has deviation 0 and no spikes."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

from newskg.core.timeaxes import day_from_key, day_key


@dataclass(frozen=True)
class SpikeRule:
    window: int = 3
    sigma: float = 1.0

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"spike window must be at least 1 day, not {self.window}")
        if self.sigma < 0:
            raise ValueError(f"sigma multiplier must not be negative, not {self.sigma}")


@dataclass(frozen=True)
class SpikeSeries:
    """One entity's series with what the rule made of it."""

    entity_id: str
    name: str
    days: list[int]
    counts: list[int]
    rolling: list[int | None]  # None: the window does not fit yet
    threshold: float | None
    spikes: list[int]

    def as_dict(self) -> dict[str, object]:
        return {
            "entity_id": self.entity_id,
            "name": self.name,
            "threshold": self.threshold,
            "spike_days": self.spikes,
            "series": [
                {"day": d, "count": c, "rolling": r}
                for d, c, r in zip(self.days, self.counts, self.rolling, strict=True)
            ],
        }


def days_from(first: int, last: int) -> list[int]:
    start, end = day_from_key(first), day_from_key(last)
    return [day_key(start + dt.timedelta(days=i)) for i in range((end - start).days + 1)]


def rolling_sums(counts: list[int], window: int) -> list[int | None]:
    sums: list[int | None] = []
    running = 0
    for i, value in enumerate(counts):
        running += value
        if i >= window:
            running -= counts[i - window]
        sums.append(running if i >= window - 1 else None)
    return sums


def threshold_of(sums: list[int], sigma: float) -> tuple[Fraction, Fraction] | None:
    """(mean, sample variance) of the rolling sums as exact fractions, or None under two values."""
    n = len(sums)
    if n < 2:
        return None
    mean = Fraction(sum(sums), n)
    variance = sum(((Fraction(s) - mean) ** 2 for s in sums), Fraction(0)) / (n - 1)
    return mean, variance


def exceeds(value: int, mean: Fraction, variance: Fraction, sigma: Fraction) -> bool:
    """value > mean + sigma·sqrt(variance), decided without a square root."""
    above = Fraction(value) - mean
    return above > 0 and above * above > sigma * sigma * variance


def detect(
    counts: Mapping[int, int], first: int, last: int, rule: SpikeRule, entity_id: str = "", name: str = ""
) -> SpikeSeries:
    """The rule on `counts` (day → count) over the period first … last (inclusive)."""
    days = days_from(first, last)
    series = [int(counts.get(d, 0)) for d in days]
    sums = rolling_sums(series, rule.window)
    stats = threshold_of([s for s in sums if s is not None], rule.sigma)
    if stats is None:
        return SpikeSeries(entity_id, name, days, series, sums, None, [])
    mean, variance = stats
    sigma = Fraction(str(rule.sigma))
    spikes = [d for d, s in zip(days, sums, strict=True) if s is not None and exceeds(s, mean, variance, sigma)]
    threshold = float(mean) + rule.sigma * float(variance) ** 0.5
    return SpikeSeries(entity_id, name, days, series, sums, threshold, spikes)
