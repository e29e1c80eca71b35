"""Reciprocal rank fusion of ranked lists and maximal marginal relevance for diversity."""

from __future__ import annotations

import numpy as np

RRF_K = 60


def rrf(rankings: list[list[str]], k: int = RRF_K) -> dict[str, float]:
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank + 1)
    return scores


def mmr(
    candidates: list[str], relevance: dict[str, float], vectors: dict[str, np.ndarray], k: int, lambda_: float = 0.7
) -> list[str]:
    """Greedy MMR: relevance (scaled to [0, 1]) against the highest cosine similarity to what is already picked.
    Candidates without a vector keep their relevance order."""
    if not candidates:
        return []
    top = max(relevance.values()) or 1.0
    picked: list[str] = []
    remaining = list(candidates)
    while remaining and len(picked) < k:

        def gain(item: str) -> float:
            rel = relevance.get(item, 0.0) / top
            if item not in vectors or not picked:
                return rel
            redundancy = (
                max(float(vectors[item] @ vectors[p]) for p in picked if p in vectors)
                if any(p in vectors for p in picked)
                else 0.0
            )
            return lambda_ * rel - (1 - lambda_) * redundancy

        best = max(remaining, key=lambda item: (gain(item), -candidates.index(item)))
        picked.append(best)
        remaining.remove(best)
    return picked
