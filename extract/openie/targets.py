"""Target subjects and pairs (NEON §2.1): a configured list, or the entities whose mentions are prominent by
TF-IDF in a time window (days as documents: frequent in the window, rare elsewhere); M2 pairs are target
subjects with the objects they co-occur with, ranked the same way."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from core.timeaxes import day_from_key


class MentionStats:
    def __init__(self) -> None:
        self._by_day: dict[int, Counter[str]] = defaultdict(Counter)
        self._pairs: dict[int, Counter[tuple[str, str]]] = defaultdict(Counter)

    def add(self, day: int, entity_ids: set[str]) -> None:
        self._by_day[day].update(entity_ids)
        self._pairs[day].update((a, b) for a in entity_ids for b in entity_ids if a != b)

    def _idf(self) -> dict[str, float]:
        days = len(self._by_day)
        df = Counter(e for counts in self._by_day.values() for e in counts)
        return {e: math.log(1 + days / n) for e, n in df.items()}

    def _window(self, end_day: int, window_days: int) -> list[int]:
        end = day_from_key(end_day)
        return [d for d in self._by_day if 0 <= (end - day_from_key(d)).days < window_days]

    def top_subjects(self, n: int, end_day: int, window_days: int) -> list[str]:
        idf = self._idf()
        tf = Counter()
        for day in self._window(end_day, window_days):
            tf.update(self._by_day[day])
        return [e for e, _ in sorted(tf.items(), key=lambda kv: (-kv[1] * idf[kv[0]], kv[0]))[:n]]

    def top_pairs(self, subjects: set[str], n: int, end_day: int, window_days: int) -> list[tuple[str, str]]:
        idf = self._idf()
        tf: Counter[tuple[str, str]] = Counter()
        for day in self._window(end_day, window_days):
            tf.update({p: c for p, c in self._pairs[day].items() if p[0] in subjects})
        return [p for p, _ in sorted(tf.items(), key=lambda kv: (-kv[1] * idf[kv[0][1]], kv[0]))[:n]]
