"""Retrieval strategies (NEON §2.2), all as of the query day: nothing published after it, or ingested after
its end, is ever returned (in the `published` view, graph/store/asof.py: nothing published after it). Every
graph read keeps the query day in view before its limit (nearest days first).

- temporal: the entity's interactions on the query day, widened ±1, ±2 … ±r days until k are found;
- generic: the k interactions most similar to the reformulated query in the mirror;
- hybrid: temporal and entity-filtered semantic lists fused by reciprocal rank, then diversified (MMR);
- newsrag: the same fusion over chunks instead of interactions (NEON's NewsRAG baseline)."""

from __future__ import annotations

import datetime as dt

import numpy as np
from qdrant_client import models

from core.timeaxes import day_from_key, day_key
from graph.mirror.qdrant import CHUNKS, INTERACTIONS, VectorMirror
from graph.store.asof import AsOf, days_between
from graph.store.store import GraphStore
from qa.evidence import Evidence
from qa.fusion import mmr, rrf

STRATEGIES = ("temporal", "generic", "hybrid", "newsrag")


def shift(day: int, days: int) -> int:
    return day_key(day_from_key(day) + dt.timedelta(days=days))


class Retriever:
    def __init__(self, store: GraphStore, mirror: VectorMirror | None, backoff_days: int = 7, window_limit: int = 1000):
        self.store = store
        self.mirror = mirror
        self.backoff_days = backoff_days
        self.window_limit = window_limit  # interactions read per temporal window, nearest the day first

    def retrieve(self, strategy: str, entity_id: str | None, text: str, as_of: AsOf | int, k: int) -> list[Evidence]:
        as_of = AsOf.of(as_of)
        if strategy == "temporal":  # the timeline read already carries the sources as of the day
            return self.temporal(entity_id, as_of, k) if entity_id else []
        if strategy == "generic":
            found = self.semantic(INTERACTIONS, text, as_of, k, None)
        elif strategy == "hybrid":  # entity-filtered: no entity, no evidence (generic is the unfiltered one)
            found = (
                self.fused(INTERACTIONS, self.temporal(entity_id, as_of, 2 * k), text, as_of, k, entity_id)
                if entity_id
                else []
            )
        elif strategy == "newsrag":
            found = (
                self.fused(CHUNKS, self.temporal_chunks(entity_id, as_of, 2 * k), text, as_of, k, entity_id)
                if entity_id
                else []
            )
        else:
            raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
        return self._with_sources(found, as_of)

    def temporal(self, entity_id: str, as_of: AsOf | int, k: int) -> list[Evidence]:
        """One read of the widest window, then the back-off in memory: the query day first, then ±1, ±2 …
        (the same result as widening step by step, at the cost of a single query). The read keeps the
        interactions nearest the day when the window holds more than its limit (a spike day on a busy entity)."""
        as_of = AsOf.of(as_of)
        day = as_of.day
        rows = self.store.timeline(
            entity_id,
            shift(day, -self.backoff_days),
            shift(day, self.backoff_days),
            as_of=as_of,
            limit=self.window_limit,
            focus_day=day,
        )
        ranked = sorted(rows, key=lambda r: (days_between(r.event_day, day), -r.n_sources, -r.published_day, r.id))
        return [
            Evidence(
                r.id,
                "interaction",
                r.text,
                r.event_day,
                r.published_day,
                1.0 / (1 + days_between(r.event_day, day)),
                sorted(r.sources),
                sorted(r.urls),
            )
            for r in ranked[:k]
        ]

    def temporal_chunks(self, entity_id: str, as_of: AsOf | int, k: int) -> list[Evidence]:
        as_of = AsOf.of(as_of)
        day = as_of.day
        # The window ends at the day and the read is newest first: the day is the last thing its limit cuts.
        rows = self.store.entity_chunks(entity_id, shift(day, -self.backoff_days), day, as_of, limit=4 * k)
        ranked = sorted(rows, key=lambda r: (days_between(r.day, day), r.id))[:k]
        return [Evidence(r.id, "chunk", r.text, r.day, r.day, 1.0 / (1 + days_between(r.day, day))) for r in ranked]

    def semantic(self, collection: str, text: str, as_of: AsOf | int, k: int, entity_id: str | None) -> list[Evidence]:
        if self.mirror is None:
            return []
        as_of = AsOf.of(as_of)
        day_field = "published_day" if collection == INTERACTIONS else "day"
        # The same as-of bounds as reads.visible(), on the mirror's copy of the graph's time payload.
        must = [
            models.FieldCondition(key=day_field, range=models.Range(lte=as_of.day)),
            models.FieldCondition(key="ingested_ms", range=models.Range(lte=as_of.ms)),
        ]
        if entity_id:
            must.append(models.FieldCondition(key="entity_ids", match=models.MatchValue(value=entity_id)))
        hits = self.mirror.search(collection, text, models.Filter(must=must), limit=k)
        kind = "interaction" if collection == INTERACTIONS else "chunk"
        return [
            Evidence(
                h.payload["graph_id"],
                kind,
                h.payload["text"],
                h.payload.get("event_day", h.payload.get("day")),
                h.payload.get("published_day", h.payload.get("day")),
                float(h.score),
            )
            for h in hits
        ]

    def fused(
        self, collection: str, temporal: list[Evidence], text: str, as_of: AsOf, k: int, entity_id: str | None
    ) -> list[Evidence]:
        semantic = self.semantic(collection, text, as_of, 2 * k, entity_id)
        pool = {e.id: e for e in semantic} | {e.id: e for e in temporal}
        scores = rrf([[e.id for e in temporal], [e.id for e in semantic]])
        order = sorted(pool, key=lambda i: (-scores[i], i))
        chosen = mmr(order, scores, self._vectors(collection, order), k)
        for item in chosen:
            pool[item].score = round(scores[item], 6)
        return [pool[i] for i in chosen]

    def _vectors(self, collection: str, ids: list[str]) -> dict[str, np.ndarray]:
        if self.mirror is None or not ids:
            return {}
        return {g: np.asarray(v, dtype=np.float32) for g, v in self.mirror.vectors(collection, ids).items()}

    def _with_sources(self, found: list[Evidence], as_of: AsOf) -> list[Evidence]:
        by_kind: dict[str, list[str]] = {}
        for e in found:
            by_kind.setdefault(e.kind, []).append(e.id)
        for kind, ids in by_kind.items():
            sources = self.store.evidence_sources(ids, as_of, kind)
            for e in found:
                if e.kind == kind and e.id in sources:
                    e.sources, e.urls = list(sources[e.id][0]), list(sources[e.id][1])
        return found
