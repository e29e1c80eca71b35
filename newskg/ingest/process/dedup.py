"""Near-duplicate chunks: MinHash over word trigrams (NEON: trigram Jaccard) with MinHashLSH.

The LSH index lives in memory; its durable, shared state is a Kafka topic of kept chunks' signatures
(`news.dedup`). Every replica replays that log at start and tails it before each batch, so state survives restarts
and is shared by all replicas with no extra server, on the local broker and on production Kafka alike.
(bench/ingest.py measures this against datasketch's Redis storage.)
"""

from __future__ import annotations

import base64
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

import numpy as np

# datasketch ships no types; Signer below is the only place that calls into it (LeanMinHash is re-exported).
from datasketch import LeanMinHash, MinHash, MinHashLSH  # pyright: ignore[reportMissingTypeStubs]

from newskg.core.ids import normalise_text
from newskg.core.timeaxes import day_from_key

_WORD = re.compile(r"\w+")
SEED = 1
SCHEME = "affine32"  # datasketch 2's default: 32-bit values, stored as uint32 in the log


def shingles(text: str, n: int = 3) -> set[bytes]:
    words = _WORD.findall(normalise_text(text))
    if len(words) < n:
        return {" ".join(words).encode()} if words else set()
    return {" ".join(words[i : i + n]).encode() for i in range(len(words) - n + 1)}


def exact_jaccard(a: str, b: str) -> float:
    sa, sb = shingles(a), shingles(b)
    return len(sa & sb) / len(sa | sb) if sa or sb else 1.0


class Signer:
    """MinHash signatures with the permutations computed once (datasketch would redo them per object)."""

    def __init__(self, num_perm: int):
        self.num_perm = num_perm
        self._template = MinHash(num_perm=num_perm, seed=SEED, scheme=SCHEME)

    def sign(self, text: str) -> LeanMinHash:
        # MinHash's permutations and update_batch have no element types in datasketch (bytes in, arrays kept).
        mh = MinHash(
            num_perm=self.num_perm,
            seed=SEED,
            permutations=self._template.permutations,  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
            scheme=SCHEME,
        )
        mh.update_batch(list(shingles(text)) or [b""])  # pyright: ignore[reportUnknownMemberType]
        return LeanMinHash(mh)

    def encode(self, mh: LeanMinHash) -> str:
        # affine32 hash values are < 2^32, so uint32 keeps them exactly.
        return base64.b64encode(mh.hashvalues.astype("<u4").tobytes()).decode()

    def decode(self, data: str) -> LeanMinHash:
        return LeanMinHash(seed=SEED, hashvalues=self.decode_values(data).astype(np.uint64), scheme=SCHEME)

    @staticmethod
    def decode_values(data: str) -> np.ndarray:
        return np.frombuffer(base64.b64decode(data), dtype="<u4")


@dataclass(frozen=True)
class Decision:
    # again: this article's own chunk, or its sighting of a kept chunk, already emitted by another record of the
    # article (a re-ingest: another ingestion instant), so it emits nothing. resend: emitted by this very record (a
    # redelivery: same article, same ingestion instant), so it is emitted again as it was (`sighting_of`: the kept
    # chunk a sighting named). A broker that lost acknowledged writes (noida after a kill -9) together with the
    # commit redelivers the record; emitting nothing then would lose its chunks for good. Downstream the copy is
    # absorbed: the extract stage skips a chunk record it wrote whole (extract/entities/journal.py).
    kind: Literal["new", "again", "duplicate", "resend"]
    chunk_id: str  # the chunk to emit (new/again/resend) or the kept chunk it duplicates
    similarity: float = 1.0
    sighting_of: str | None = None  # resend of a sighting: the kept chunk it named


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


class BandTable:
    """MinHash-LSH buckets in flat numpy arrays: for every kept signature, one 64-bit key per band (a hash of the
    band's values and its number), kept sorted with the signature's slot beside it. Candidates of a query are the
    slots sharing at least one band key: the same rule as datasketch's MinHashLSH (and its b, r), at ~12 bytes per
    band instead of a Python set per bucket (~8 KB per signature at 23 bands, measured in bench/ingest.py).
    New keys wait in a small dict and are merged into the sorted arrays in bulk."""

    MERGE_AT = 20_000  # pending signatures before a merge (a merge is O(total keys), a memory move)

    def __init__(self, bands: int, rows: int):
        self.bands, self.rows = bands, rows
        rng = np.random.default_rng(SEED)  # fixed: keys are only compared inside one process, never stored
        self._mult = rng.integers(1, 2**63, size=rows, dtype=np.uint64) | np.uint64(1)
        self._band_salt = rng.integers(0, 2**63, size=bands, dtype=np.uint64)
        self._keys = np.empty(0, dtype=np.uint64)
        self._slots = np.empty(0, dtype=np.int32)
        self._pending: dict[int, list[int]] = {}
        self._pending_count = 0

    def keys_of(self, values: np.ndarray) -> np.ndarray:
        """Band keys of signatures (n x num_perm uint32): n x bands uint64 (splitmix64 finaliser over a
        multiply-add of the band's values)."""
        bands = values[:, : self.bands * self.rows].astype(np.uint64).reshape(len(values), self.bands, self.rows)
        h = (bands * self._mult).sum(axis=2, dtype=np.uint64) + self._band_salt
        h ^= h >> np.uint64(30)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(27)
        h *= np.uint64(0x94D049BB133111EB)
        h ^= h >> np.uint64(31)
        return h

    def insert(self, slot: int, keys: np.ndarray) -> None:
        for key in keys.tolist():
            self._pending.setdefault(key, []).append(slot)
        self._pending_count += 1
        if self._pending_count >= self.MERGE_AT:
            self.merge()

    def merge(self) -> None:
        if not self._pending:
            return
        keys = np.fromiter((k for k, slots in self._pending.items() for _ in slots), dtype=np.uint64)
        slots = np.fromiter((s for ss in self._pending.values() for s in ss), dtype=np.int32)
        order = np.argsort(keys, kind="stable")
        keys, slots = keys[order], slots[order]
        at = np.searchsorted(self._keys, keys)
        self._keys = np.insert(self._keys, at, keys)
        self._slots = np.insert(self._slots, at, slots)
        self._pending, self._pending_count = {}, 0

    def insert_bulk(self, keys: np.ndarray, slots: np.ndarray) -> None:
        """Many signatures at once (n x bands keys, n slots): one sort, one merge."""
        self.merge()
        flat_slots = np.repeat(slots.astype(np.int32), self.bands)
        flat_keys = keys.reshape(-1)
        order = np.argsort(flat_keys, kind="stable")
        flat_keys, flat_slots = flat_keys[order], flat_slots[order]
        at = np.searchsorted(self._keys, flat_keys)
        self._keys = np.insert(self._keys, at, flat_keys)
        self._slots = np.insert(self._slots, at, flat_slots)

    def rebuild(self, keys: np.ndarray, slots: np.ndarray) -> None:
        """Replace everything with these (n x bands keys, n slots): after dropping evicted signatures."""
        flat_slots = np.repeat(slots.astype(np.int32), self.bands)
        flat_keys = keys.reshape(-1)
        order = np.argsort(flat_keys, kind="stable")
        self._keys, self._slots = flat_keys[order], flat_slots[order]
        self._pending, self._pending_count = {}, 0

    def candidates(self, keys: np.ndarray) -> set[int]:
        lo = np.searchsorted(self._keys, keys, side="left")
        hi = np.searchsorted(self._keys, keys, side="right")
        found = {
            int(s) for a, b in zip(lo.tolist(), hi.tolist(), strict=True) if b > a for s in self._slots[a:b].tolist()
        }
        for key in keys.tolist():
            found.update(self._pending.get(key, ()))
        return found

    @property
    def nbytes(self) -> int:
        return self._keys.nbytes + self._slots.nbytes


class DedupIndex:
    """Kept chunks' signatures (slots in flat arrays, searched through BandTable) and the sightings already
    emitted, bounded by the publication window."""

    def __init__(self, threshold: float, num_perm: int, window_days: int | None = None):
        self.threshold = threshold
        self.signer = Signer(num_perm)
        self.window = DedupWindow(window_days)
        # The LSH only proposes candidates; each is then checked against `threshold` by its estimated Jaccard.
        # Banding for a lower threshold, weighted against misses, keeps recall near 0.99 at the threshold
        # (P(candidate | J=0.7) = 0.985 with 128 permutations) for a few more cheap checks. datasketch picks b, r.
        params = MinHashLSH(threshold=max(0.05, threshold - 0.1), num_perm=num_perm, weights=(0.2, 0.8))
        self._bands = BandTable(params.b, params.r)
        self._sigs = np.empty((1024, num_perm), dtype=np.uint32)
        self._days = np.empty(1024, dtype=np.int32)  # ordinal publication day; -1: none (held for good)
        self._emitted_ms = np.empty(1024, dtype=np.int64)  # ingestion ms of the record that emitted it; -1: unknown
        self._alive = np.zeros(1024, dtype=bool)
        self._ids: list[str] = []
        self._owners: list[str] = []
        self._slot_of: dict[str, int] = {}
        self._unbanded: list[int] = []  # loaded slots whose band keys are not in the table yet
        # hash of (article id, its own chunk id) of the sightings already emitted → (ingestion ms of the record
        # that emitted it, -1: unknown; the kept chunk it named; the similarity it stated), and their days (eviction)
        self._sighted: dict[int, tuple[int, str, float]] = {}
        self._sighted_on: dict[int, list[int]] = defaultdict(list)
        # (chunk id, ingestion ms of the record that emitted it) → ordinal day: chunks the extract stage
        # dead-lettered (DedupRelease), so their signature is not held even when it is read after the release
        self._released: dict[tuple[str, int], int] = {}
        self.evicted = 0
        self.released = 0

    def __len__(self) -> int:
        return len(self._slot_of)

    def __contains__(self, chunk_id: str) -> bool:
        return chunk_id in self._slot_of

    @property
    def sightings(self) -> int:
        return len(self._sighted)

    def add(
        self, chunk_id: str, article_id: str, mh: LeanMinHash, day: int | None = None, ingested_ms: int | None = None
    ) -> bool:
        """Keep a chunk, searchable at once; False when its day is already outside the window (not kept).
        `ingested_ms`: of the article record that emitted it (tells its redelivery from a re-ingest)."""
        values = mh.hashvalues.astype(np.uint32)
        slot = self._hold(chunk_id, article_id, values, day, ingested_ms)
        if slot is None:
            return False
        self.settle()
        self._bands.insert(slot, self._bands.keys_of(values[None, :])[0])
        return True

    def load(
        self,
        chunk_id: str,
        article_id: str,
        values: np.ndarray,
        day: int | None = None,
        ingested_ms: int | None = None,
    ) -> bool:
        """Keep a chunk read from the log (uint32 values); its bands are computed in bulk before the next
        decision, so a replay pays one vectorised hash and one sort instead of a dict update per band."""
        slot = self._hold(chunk_id, article_id, values, day, ingested_ms)
        if slot is None:
            return False
        self._unbanded.append(slot)
        return True

    def _hold(
        self, chunk_id: str, article_id: str, values: np.ndarray, day: int | None, ingested_ms: int | None
    ) -> int | None:
        self._move_window(day)
        if chunk_id in self._slot_of or not self.window.holds(day):
            return None
        if ingested_ms is not None and (chunk_id, ingested_ms) in self._released:
            return None
        slot = len(self._ids)
        if slot == len(self._alive):
            self._grow()
        self._sigs[slot] = values
        self._days[slot] = day_from_key(day).toordinal() if day is not None else -1
        self._emitted_ms[slot] = -1 if ingested_ms is None else ingested_ms
        self._alive[slot] = True
        self._ids.append(chunk_id)
        self._owners.append(sys.intern(article_id))
        self._slot_of[chunk_id] = slot
        return slot

    def settle(self, piece: int = 250_000) -> None:
        """Put loaded signatures into the band table (done before any decision anyway). In pieces: bounds the
        temporary arrays of a large replay to a few hundred MB."""
        slots = np.array(self._unbanded, dtype=np.int64)
        self._unbanded = []
        for start in range(0, len(slots), piece):
            part = slots[start : start + piece]
            self._bands.insert_bulk(self._bands.keys_of(self._sigs[part]), part)

    def _grow(self) -> None:
        size = max(1024, len(self._alive) * 2)
        self._sigs = np.resize(self._sigs, (size, self._sigs.shape[1]))
        self._days = np.resize(self._days, size)
        self._emitted_ms = np.resize(self._emitted_ms, size)
        alive = np.zeros(size, dtype=bool)
        alive[: len(self._alive)] = self._alive
        self._alive = alive

    def add_sighting(
        self,
        article_id: str,
        chunk_id: str,
        kept_chunk_id: str,
        day: int,
        ingested_ms: int | None = None,
        similarity: float | None = None,
    ) -> bool:
        """Remember that article's chunk `chunk_id` was emitted as a sighting of `kept_chunk_id` (by the record
        ingested at `ingested_ms`, with that similarity)."""
        self._move_window(day)
        key = hash((article_id, chunk_id))  # in memory only; rebuilt from the log by every process
        if key in self._sighted or not self.window.holds(day):
            return False
        self._sighted[key] = (-1 if ingested_ms is None else ingested_ms, kept_chunk_id, similarity or 1.0)
        self._sighted_on[day_from_key(day).toordinal()].append(key)
        return True

    def release(self, chunk_id: str, ingested_ms: int, day: int) -> bool:
        """The chunk emitted by the record ingested at `ingested_ms` was dead-lettered downstream (it is not in the
        graph): its signature is let go, so near-duplicates are no longer sightings of it. Remembered within the
        window, so the signature is not held if it is read later (the release may come first in the log). True
        when a held signature was let go."""
        self._move_window(day)
        if not self.window.holds(day):
            return False
        self._released[(chunk_id, ingested_ms)] = day_from_key(day).toordinal()
        slot = self._slot_of.get(chunk_id)
        if slot is None or int(self._emitted_ms[slot]) not in (ingested_ms, -1):
            return False
        del self._slot_of[chunk_id]
        self._alive[slot] = False
        self.released += 1
        return True

    def _move_window(self, day: int | None) -> None:
        cutoff = self.window.advance(day)
        if cutoff is None:
            return
        used = len(self._ids)
        out = self._alive[:used] & (self._days[:used] >= 0) & (self._days[:used] <= cutoff)
        for slot in np.flatnonzero(out).tolist():
            del self._slot_of[self._ids[slot]]
        self._alive[:used] &= ~out
        self.evicted += int(out.sum())
        for ordinal in [o for o in self._sighted_on if o <= cutoff]:
            for key in self._sighted_on.pop(ordinal):
                self._sighted.pop(key, None)
        for key in [k for k, ordinal in self._released.items() if ordinal <= cutoff]:
            del self._released[key]
        if used > 4096 and len(self._slot_of) < used * 0.75:
            self._compact()

    def _compact(self) -> None:
        """Drop evicted slots (a quarter or more of them) and rebuild the band table over the rest."""
        keep = np.flatnonzero(self._alive[: len(self._ids)])
        self._sigs = self._sigs[keep].copy()
        self._days = self._days[keep].copy()
        self._emitted_ms = self._emitted_ms[keep].copy()
        self._alive = np.ones(len(keep), dtype=bool)
        self._ids = [self._ids[i] for i in keep.tolist()]
        self._owners = [self._owners[i] for i in keep.tolist()]
        self._slot_of = {chunk_id: slot for slot, chunk_id in enumerate(self._ids)}
        self._bands.rebuild(self._bands.keys_of(self._sigs), np.arange(len(keep)))
        self._unbanded = []

    def decide(self, chunk_id: str, article_id: str, mh: LeanMinHash, ingested_ms: int | None = None) -> Decision:
        """Only chunks kept for *other* articles make a duplicate: overlap inside one article is expected.
        Among several near-duplicates, the most similar wins, then the smallest chunk id (no arrival order).
        `ingested_ms`: the article record's; the record that emitted a chunk or sighting gets `resend` for it."""
        sighted = self._sighted.get(hash((article_id, chunk_id)))
        if sighted is not None:
            emitted_ms, kept_chunk_id, similarity = sighted
            if ingested_ms is not None and emitted_ms == ingested_ms:
                return Decision("resend", chunk_id, similarity, sighting_of=kept_chunk_id)
            return Decision("again", chunk_id, 1.0)
        slot = self._slot_of.get(chunk_id)
        if slot is not None and self._owners[slot] == article_id:
            by_this_record = ingested_ms is not None and int(self._emitted_ms[slot]) == ingested_ms
            return Decision("resend" if by_this_record else "again", chunk_id, 1.0)
        if slot is not None:
            return Decision("duplicate", chunk_id, 1.0)
        self.settle()
        values = mh.hashvalues.astype(np.uint32)
        slots = [
            s
            for s in self._bands.candidates(self._bands.keys_of(values[None, :])[0])
            if self._alive[s] and self._owners[s] != article_id
        ]
        if not slots:
            return Decision("new", chunk_id)
        similarity = np.count_nonzero(self._sigs[slots] == values, axis=1) / len(values)
        best = min(
            ((-sim, self._ids[s]) for sim, s in zip(similarity.tolist(), slots, strict=True) if sim >= self.threshold),
            default=None,
        )
        if best:
            return Decision("duplicate", best[1], round(-best[0], 4))
        return Decision("new", chunk_id)

    def memory_bytes(self) -> int:
        """Bytes of the numpy arrays (signatures, band keys, days): the bulk of the index; Python objects (ids,
        maps) come on top and are measured in bench/ingest.py."""
        return self._sigs.nbytes + self._days.nbytes + self._emitted_ms.nbytes + self._alive.nbytes + self._bands.nbytes
