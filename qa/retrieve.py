"""Retrieval strategies (NEON §2.2), all as of the query day: nothing published after it, or ingested after
its end, is ever returned.

- temporal: the entity's interactions on the query day, widened ±1, ±2 … ±r days until k are found;
- generic: the k interactions most similar to the reformulated query in the mirror;
- hybrid: temporal and entity-filtered semantic lists fused by reciprocal rank, then diversified (MMR);
- newsrag: the same fusion over chunks instead of interactions (NEON's NewsRAG baseline)."""

from __future__ import annotations

import datetime as dt

import numpy as np
from qdrant_client import models

from core.timeaxes import day_from_key, day_key, end_of_day_ms
from graph.mirror.qdrant import CHUNKS, INTERACTIONS, VectorMirror
from graph.store.store import GraphStore
from qa.evidence import Evidence
from qa.fusion import mmr, rrf

STRATEGIES = ("temporal", "generic", "hybrid", "newsrag")


def shift(day: int, days: int) -> int:
    return day_key(day_from_key(day) + dt.timedelta(days=days))


class Retriever:
    def __init__(self, store: GraphStore, mirror: VectorMirror | None, backoff_days: int = 7):
        self.store = store
        self.mirror = mirror
        self.backoff_days = backoff_days

    def retrieve(self, strategy: str, entity_id: str | None, text: str, day: int, k: int) -> list[Evidence]:
        if strategy == "temporal":
            found = self.temporal(entity_id, day, k) if entity_id else []
        elif strategy == "generic":
            found = self.semantic(INTERACTIONS, text, day, k, None)
        elif strategy == "hybrid":  # entity-filtered: no entity, no evidence (generic is the unfiltered one)
            found = self.fused(INTERACTIONS, self.temporal(entity_id, day, 2 * k), text, day, k,
                               entity_id) if entity_id else []
        elif strategy == "newsrag":
            found = self.fused(CHUNKS, self.temporal_chunks(entity_id, day, 2 * k), text, day, k,
                               entity_id) if entity_id else []
        else:
            raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
        return self._with_sources(found, day)

    def temporal(self, entity_id: str, day: int, k: int) -> list[Evidence]:
        """One read of the widest window, then the back-off in memory: the query day first, then ±1, ±2 …
        (the same result as widening step by step, at the cost of a single query)."""
        rows = self.store.timeline(entity_id, shift(day, -self.backoff_days), shift(day, self.backoff_days),
                                   as_of_day=day, limit=1000)
        ranked = sorted(rows, key=lambda r: (_distance(r["event_day"], day), -r["n_sources"], -r["published_day"],
                                             r["id"]))
        return [Evidence(r["id"], "interaction", r["text"], r["event_day"], r["published_day"],
                         1.0 / (1 + _distance(r["event_day"], day)), r["sources"], r["urls"]) for r in ranked[:k]]

    def temporal_chunks(self, entity_id: str, day: int, k: int) -> list[Evidence]:
        rows = self.store.entity_chunks(entity_id, shift(day, -self.backoff_days), day, day, limit=4 * k)
        ranked = sorted(rows, key=lambda r: (_distance(r["day"], day), r["id"]))[:k]
        return [Evidence(r["id"], "chunk", r["text"], r["day"], r["day"], 1.0 / (1 + _distance(r["day"], day)))
                for r in ranked]

    def semantic(self, collection: str, text: str, day: int, k: int, entity_id: str | None) -> list[Evidence]:
        if self.mirror is None:
            return []
        day_field = "published_day" if collection == INTERACTIONS else "day"
        must = [models.FieldCondition(key=day_field, range=models.Range(lte=day)),
                models.FieldCondition(key="ingested_ms", range=models.Range(lte=end_of_day_ms(day)))]
        if entity_id:
            must.append(models.FieldCondition(key="entity_ids", match=models.MatchValue(value=entity_id)))
        hits = self.mirror.search(collection, text, models.Filter(must=must), limit=k)
        kind = "interaction" if collection == INTERACTIONS else "chunk"
        return [Evidence(h.payload["graph_id"], kind, h.payload["text"],
                         h.payload.get("event_day", h.payload.get("day")), h.payload.get("published_day",
                                                                                          h.payload.get("day")),
                         float(h.score)) for h in hits]

    def fused(self, collection: str, temporal: list[Evidence], text: str, day: int, k: int,
              entity_id: str | None) -> list[Evidence]:
        semantic = self.semantic(collection, text, day, 2 * k, entity_id)
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

    def _with_sources(self, found: list[Evidence], day: int) -> list[Evidence]:
        by_kind: dict[str, list[str]] = {}
        for e in found:
            by_kind.setdefault(e.kind, []).append(e.id)
        for kind, ids in by_kind.items():
            sources = self.store.evidence_sources(ids, day, kind)
            for e in found:
                if e.kind == kind and e.id in sources:
                    e.sources, e.urls = list(sources[e.id][0]), list(sources[e.id][1])
        return found


def _distance(a: int, b: int) -> int:
    return abs((day_from_key(a) - day_from_key(b)).days)
