"""Near-duplicate chunks: MinHash over word trigrams (NEON: trigram Jaccard) with MinHashLSH.

The LSH index lives in memory; its durable, shared state is a Kafka topic of kept chunks' signatures
(`news.dedup`). Every replica replays that log at start and tails it before each batch, so state survives restarts
and is shared by all replicas with no extra server, on the local broker and on production Kafka alike.
(bench/ingest.py measures this against datasketch's Redis storage.)
"""

from __future__ import annotations

import base64
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

import numpy as np
from datasketch import LeanMinHash, MinHash, MinHashLSH

from core.ids import normalise_text
from core.timeaxes import day_from_key

_WORD = re.compile(r"\w+")
SEED = 1
SCHEME = "affine32"  # datasketch 2's default: 32-bit values, stored as uint32 in the log


def shingles(text: str, n: int = 3) -> set[bytes]:
    words = _WORD.findall(normalise_text(text))
    if len(words) < n:
        return {" ".join(words).encode()} if words else set()
    return {" ".join(words[i:i + n]).encode() for i in range(len(words) - n + 1)}


def exact_jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


class Signer:
    """MinHash signatures with the permutations computed once (datasketch would redo them per object)."""

    def __init__(self, num_perm: int):
        self.num_perm = num_perm
        self._template = MinHash(num_perm=num_perm, seed=SEED, scheme=SCHEME)

    def sign(self, text: str) -> LeanMinHash:
        mh = MinHash(num_perm=self.num_perm, seed=SEED, permutations=self._template.permutations, scheme=SCHEME)
        mh.update_batch(list(shingles(text)) or [b""])
        return LeanMinHash(mh)

    def encode(self, mh: LeanMinHash) -> str:
        # affine32 hash values are < 2^32, so uint32 keeps them exactly.
        return base64.b64encode(mh.hashvalues.astype("<u4").tobytes()).decode()

    def decode(self, data: str) -> LeanMinHash:
        values = np.frombuffer(base64.b64decode(data), dtype="<u4").astype(np.uint64)
        return LeanMinHash(seed=SEED, hashvalues=values, scheme=SCHEME)


@dataclass(frozen=True)
class Decision:
    # again: this article's own chunk, or its sighting of a kept chunk, already emitted and acknowledged (both are
    # only logged after the acknowledgement), so a re-ingested article or a re-delivered message emits nothing.
    kind: Literal["new", "again", "duplicate"]
    chunk_id: str  # the chunk to emit (new/again) or the kept chunk it duplicates
    similarity: float = 1.0


class DedupWindow:
    """The index's clock: publication days back from the newest one seen. Replay order does not matter: an entry
    is kept iff its day is within `days` of the newest day among all entries read."""

    def __init__(self, days: int | None):
        self.days = days
        self.newest: int | None = None  # ordinal of the newest publication day seen

    def advance(self, day: int | None) -> int | None:
        """Note a day; returns the new cutoff ordinal (days at or before it fall out) when the window moved."""
        if day is None or self.days is None:
            return None
        ordinal = day_from_key(day).toordinal()
        if self.newest is not None and ordinal <= self.newest:
            return None
        self.newest = ordinal
        return ordinal - self.days

    def holds(self, day: int | None) -> bool:
        """Entries without a day (logged before the window existed) are always held."""
        if day is None or self.days is None or self.newest is None:
            return True
        return day_from_key(day).toordinal() > self.newest - self.days


class DedupIndex:
    def __init__(self, threshold: float, num_perm: int, window_days: int | None = None):
        self.threshold = threshold
        self.signer = Signer(num_perm)
        self.window = DedupWindow(window_days)
        # The LSH only proposes candidates; each is then checked against `threshold` by its estimated Jaccard.
        # Banding for a lower threshold, weighted against misses, keeps recall near 0.99 at the threshold
        # (P(candidate | J=0.7) = 0.985 with 128 permutations) for a few more cheap checks.
        self._lsh = MinHashLSH(threshold=max(0.05, threshold - 0.1), num_perm=num_perm, weights=(0.2, 0.8))
        self._owner: dict[str, str] = {}
        self._sig: dict[str, LeanMinHash] = {}
        # (article id, its own chunk id) -> the kept chunk it was sighted as: the sightings already emitted.
        self._sighted: dict[tuple[str, str], str] = {}
        # ordinal day -> what was added on it, for eviction when the window moves.
        self._kept_on: dict[int, list[str]] = defaultdict(list)
        self._sighted_on: dict[int, list[tuple[str, str]]] = defaultdict(list)
        self.evicted = 0

    def __len__(self) -> int:
        return len(self._owner)

    def __contains__(self, chunk_id: str) -> bool:
        return chunk_id in self._owner

    @property
    def sightings(self) -> int:
        return len(self._sighted)

    def add(self, chunk_id: str, article_id: str, mh: LeanMinHash, day: int | None = None) -> bool:
        """Keep a chunk; False when its day is already outside the window (it is not kept)."""
        self._move_window(day)
        if chunk_id in self._owner or not self.window.holds(day):
            return False
        self._lsh.insert(chunk_id, mh, check_duplication=False)
        self._owner[chunk_id] = article_id
        self._sig[chunk_id] = mh
        if day is not None:
            self._kept_on[day_from_key(day).toordinal()].append(chunk_id)
        return True

    def add_sighting(self, article_id: str, chunk_id: str, kept_chunk_id: str, day: int) -> bool:
        """Remember that article's chunk `chunk_id` was emitted as a sighting of `kept_chunk_id`."""
        self._move_window(day)
        key = (article_id, chunk_id)
        if key in self._sighted or not self.window.holds(day):
            return False
        self._sighted[key] = kept_chunk_id
        self._sighted_on[day_from_key(day).toordinal()].append(key)
        return True

    def _move_window(self, day: int | None) -> None:
        cutoff = self.window.advance(day)
        if cutoff is None:
            return
        for ordinal in [o for o in self._kept_on if o <= cutoff]:
            for chunk_id in self._kept_on.pop(ordinal):
                if self._owner.pop(chunk_id, None) is not None:
                    self._lsh.remove(chunk_id)
                    del self._sig[chunk_id]
                    self.evicted += 1
        for ordinal in [o for o in self._sighted_on if o <= cutoff]:
            for key in self._sighted_on.pop(ordinal):
                self._sighted.pop(key, None)

    def decide(self, chunk_id: str, article_id: str, mh: LeanMinHash) -> Decision:
        """Only chunks kept for *other* articles make a duplicate: overlap inside one article is expected."""
        sighted = self._sighted.get((article_id, chunk_id))
        if sighted is not None:
            return Decision("again", sighted, 1.0)
        owner = self._owner.get(chunk_id)
        if owner is not None:
            return Decision("again" if owner == article_id else "duplicate", chunk_id, 1.0)
        best: tuple[float, str] | None = None
        for candidate in self._lsh.query(mh):
            if self._owner[candidate] == article_id:
                continue
            similarity = mh.jaccard(self._sig[candidate])
            if similarity >= self.threshold and (best is None or similarity > best[0]):
                best = (similarity, candidate)
        if best:
            return Decision("duplicate", best[1], round(best[0], 4))
        return Decision("new", chunk_id)
