"""The retrieval strategies by name (qa/strategies/base.py `RetrievalStrategy`, one module each)."""

from __future__ import annotations

from newskg.qa.strategies.base import STRATEGIES, Reads, Request, RetrievalStrategy, Strategy
from newskg.qa.strategies.generic import Generic
from newskg.qa.strategies.hybrid import Hybrid
from newskg.qa.strategies.newsrag import NewsRAG
from newskg.qa.strategies.temporal import Temporal

__all__ = ["BY_NAME", "STRATEGIES", "Reads", "Request", "RetrievalStrategy", "Strategy", "strategy_of"]

BY_NAME: dict[Strategy, RetrievalStrategy] = {s.name: s for s in (Temporal(), Generic(), Hybrid(), NewsRAG())}


def strategy_of(strategy: Strategy | RetrievalStrategy) -> RetrievalStrategy:
    """The strategy object of a name (ValueError for an unknown one: a name may come from outside, unchecked)."""
    if not isinstance(strategy, str):
        return strategy
    found = BY_NAME.get(strategy)
    if found is None:
        raise ValueError(f"unknown strategy {strategy!r}: one of {', '.join(STRATEGIES)}")
    return found
