"""Target subjects and pairs (NEON §2.1): a configured list, or the entities whose mentions are prominent by
TF-IDF in a time window (days as documents: frequent in the window, rare elsewhere); M2 pairs are target
subjects with the objects they co-occur with, ranked the same way.

The stage reads the counts from the graph (`GraphMentionStats`, over graph/store/mentions.py), as of a chunk:
the window of publication days ending on the chunk's day, counting chunks first ingested on or before the
chunk's ingestion day. So replicas and restarts agree on every completed day (nothing lives in one process's
memory); within the chunk's own ingestion day the counts hold what has been processed so far.
`MentionStats` is the same ranking over in-memory counts (benchmarks, one-off runs)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping
from datetime import timedelta
from typing import TypeVar

from newskg.core.timeaxes import day_from_key, day_key
from newskg.graph.connection import GraphConnection
from newskg.graph.store import mentions

K = TypeVar("K", bound=Hashable)


def idf(days_mentioned: Mapping[str, int], days: int) -> dict[str, float]:
    return {e: math.log(1 + days / n) for e, n in days_mentioned.items() if n}


def rank(tf: Mapping[K, int], weight: Callable[[K], float], n: int) -> list[K]:
    """The n highest tf × weight, ties broken by the key itself: the same list whatever the dict's order."""
    return [k for k, _ in sorted(tf.items(), key=lambda kv: (-kv[1] * weight(kv[0]), kv[0]))[:n]]


def window_start(end_day: int, window_days: int) -> int:
    return day_key(day_from_key(end_day) - timedelta(days=window_days - 1))


class GraphMentionStats:
    """TF-IDF targets over the graph's daily mention counts, as of (publication day, ingestion day): chunks
    published in the window ending on that day and ingested on or before that ingestion day. `pending`: chunks
    of the batch in hand that the graph does not count yet, chunk id → (day, ingestion day, entity ids), counted
    as if they were (keyed by chunk id: each once; the stage leaves out those the graph counts already)."""

    def __init__(self, conn: GraphConnection):
        self.conn = conn

    def top_subjects(
        self,
        n: int,
        end_day: int,
        window_days: int,
        ingested_by: int,
        pending: Mapping[str, tuple[int, int, set[str]]] | None = None,
    ) -> list[str]:
        start = window_start(end_day, window_days)
        tf = Counter(mentions.window_counts(self.conn, start, end_day, ingested_by))
        extra_days: dict[str, set[int]] = defaultdict(set)
        for day, ingested, entity_ids in (pending or {}).values():
            if day <= end_day and ingested <= ingested_by:
                if day >= start:
                    tf.update(entity_ids)
                for e in entity_ids:
                    extra_days[e].add(day)
        df, days = mentions.days_mentioned(self.conn, sorted(tf), end_day, ingested_by)
        # A day only the pending chunks mention adds to the counts too (an approximation: it may already count).
        for e, pending_days in extra_days.items():
            df[e] = df.get(e, 0) + len(pending_days)
        days += len({d for ds in extra_days.values() for d in ds})
        weights = idf(df, days)
        return rank(tf, lambda e: weights.get(e, 0.0), n)

    def top_pairs(
        self, subjects: set[str], n: int, end_day: int, window_days: int, ingested_by: int
    ) -> list[tuple[str, str]]:
        tf = mentions.pair_counts(self.conn, sorted(subjects), window_start(end_day, window_days), end_day, ingested_by)
        df, days = mentions.days_mentioned(self.conn, sorted({o for _, o in tf}), end_day, ingested_by)
        weights = idf(df, days)
        return rank(tf, lambda pair: weights.get(pair[1], 0.0), n)


class MentionStats:
    """In-memory counts (one process, everything it was given): the benchmarks' stand-in for the graph."""

    def __init__(self) -> None:
        self._by_day: dict[int, Counter[str]] = defaultdict(Counter)
        self._pairs: dict[int, Counter[tuple[str, str]]] = defaultdict(Counter)

    def add(self, day: int, entity_ids: set[str]) -> None:
        self._by_day[day].update(entity_ids)
        self._pairs[day].update((a, b) for a in entity_ids for b in entity_ids if a != b)

    def _idf(self) -> dict[str, float]:
        return idf(Counter(e for counts in self._by_day.values() for e in counts), len(self._by_day))

    def _window(self, end_day: int, window_days: int) -> list[int]:
        end = day_from_key(end_day)
        return [d for d in self._by_day if 0 <= (end - day_from_key(d)).days < window_days]

    def top_subjects(self, n: int, end_day: int, window_days: int) -> list[str]:
        weights = self._idf()
        tf: Counter[str] = Counter()
        for day in self._window(end_day, window_days):
            tf.update(self._by_day[day])
        return rank(tf, lambda e: weights[e], n)

    def top_pairs(self, subjects: set[str], n: int, end_day: int, window_days: int) -> list[tuple[str, str]]:
        weights = self._idf()
        tf: Counter[tuple[str, str]] = Counter()
        for day in self._window(end_day, window_days):
            tf.update({p: c for p, c in self._pairs[day].items() if p[0] in subjects})
        return rank(tf, lambda pair: weights[pair[1]], n)
