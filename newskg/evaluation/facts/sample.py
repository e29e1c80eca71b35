"""A seeded sample that stays put: items are ranked by a hash of (seed, key) and the lowest ranks taken, so a run
after a change keeps every unchanged fact that was in the sample and only draws new ones where facts changed (a
uniform random sample of what the stage states, not one per page: a page that yields many facts weighs more, as
it does in the graph)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def rank(seed: int, key: str) -> str:
    return hashlib.sha256(f"{seed}:{key}".encode()).hexdigest()


def seeded_sample(items: Sequence[T], size: int, seed: int, key: Callable[[T], str]) -> list[T]:
    unique = {key(item): item for item in items}  # the same text in the same chunk is one fact
    ordered = sorted(unique, key=lambda k: rank(seed, k))
    return [unique[k] for k in ordered[:size]]
