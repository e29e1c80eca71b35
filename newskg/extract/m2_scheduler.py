"""When M2 batches go out (NEON §2.1, M2), apart from the stage that feeds it.

A pair's chunks that no batch has covered yet are read back from the graph, oldest first, and cut into batches
of k. A full batch goes out as soon as it exists. A shorter remainder waits for more chunks, but not forever: it
goes out once its oldest chunk has waited `max_wait_s` (wall-clock, counted from the moment this scheduler first
saw that chunk pending; after a restart, from the start, since the pairs with a waiting remainder are remembered in
the graph), or when the stream is idle in a batch run (`flush_all`, the stage's on_idle).

Coverage (an M2Batch in the graph) is written only for an answer that parsed. A batch whose answer did not parse,
or whose call or write raised something that is neither an outage nor a stop (core/failures.py), is tried again on
the next tick; after
`max_tries` tries of one of its chunks the batch is dead-lettered (reason `m2_batch_failed`, naming the pair and
the chunk ids) and recorded as given up (M2Failed), never as covered."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from newskg.core.errors import NewskgError
from newskg.core.llm.client import LLMClient
from newskg.core.records import DeadLetter, Interaction
from newskg.core.timeaxes import iso, utc_now
from newskg.extract.failures import describe, must_stop
from newskg.extract.openie.llm_variants import EntityRef, M2Snippet, batches, run_m2
from newskg.extract.prompts import m2_pair
from newskg.graph.mirror.qdrant import VectorMirror
from newskg.graph.mirror.sync import mirror_from_graph
from newskg.graph.store.store import GraphStore

log = logging.getLogger(__name__)

BATCH_FAILED = "m2_batch_failed"
Pair = tuple[str, str]


@dataclass(frozen=True)
class GiveUp:
    """A batch dead-lettered: the record to send, then (once the broker acknowledged it) the graph's note."""

    letter: DeadLetter
    pair: Pair
    chunk_ids: tuple[str, ...]
    tries: int


@dataclass
class M2Stats:
    batches_sent: int = 0
    batches_covered: int = 0
    batches_failed: int = 0
    batches_dead_lettered: int = 0
    remainders_flushed: int = 0


@dataclass
class _Waiting:
    since: float  # when the oldest chunk of the remainder was first seen pending
    retry: bool = False  # a batch failed: try again at the next tick, whatever the wait


@dataclass
class M2Scheduler:
    store: GraphStore
    llm: LLMClient
    name_of: Callable[[str], str]  # entity id -> name for the prompt
    k: int = 5
    max_wait_s: float = 600.0
    max_tries: int = 3
    mirror: VectorMirror | None = None
    clock: Callable[[], float] = time.time
    stage: str = "extract"
    topic: str = ""
    stats: M2Stats = field(default_factory=M2Stats)

    def __post_init__(self) -> None:
        self._waiting: dict[Pair, _Waiting] = {}
        self._seen: dict[Pair, dict[str, float]] = {}  # pair -> chunk id -> first seen pending
        self._tries: dict[tuple[Pair, str], int] = {}  # (pair, chunk id) -> failed tries
        self._given_up: list[GiveUp] = []
        self._abandoned: set[tuple[Pair, str]] = set()  # dead-lettered, graph note pending: not tried again
        self._restored: dict[Pair, float] = {}  # pairs a previous run left waiting: their chunks count from start
        now = self.clock()
        for pair in self.store.m2_open_pairs():
            self._waiting[pair] = _Waiting(since=now)
            self._restored[pair] = now

    # --- entry points
    def after_write(self, pairs: list[Pair]) -> bool:
        """The pairs a consumer batch touched (its chunks are in the graph): their full batches go out."""
        return self._run([p for p in pairs], flush=False)

    def tick(self) -> bool:
        """Remainders whose oldest chunk has waited max_wait_s, and batches to try again."""
        now = self.clock()
        overdue = sorted(p for p, w in self._waiting.items() if now - w.since >= self.max_wait_s)
        retries = sorted(p for p, w in self._waiting.items() if w.retry and p not in overdue)
        return self._run(overdue, flush=True) | self._run(retries, flush=False)

    def flush_all(self) -> bool:
        """The stream is idle (batch runs): every remainder goes out."""
        return self._run(sorted(self._waiting), flush=True)

    def waiting(self) -> dict[Pair, float]:
        return {p: w.since for p, w in self._waiting.items()}

    def given_up(self) -> tuple[GiveUp, ...]:
        """Batches given up whose dead letters are still to send; hand them to `dead_lettered` once the broker
        acknowledged their letters."""
        return tuple(self._given_up)

    def dead_lettered(self, sent: Iterable[GiveUp]) -> None:
        """These batches' dead letters are on the broker: note them as given up in the graph (they leave the
        pending list without counting as covered). Give-ups not among them stay to be sent."""
        noted = [g for g in sent if g in self._given_up]
        for g in noted:
            self.store.m2_give_up(f"{g.pair[0]}|{g.pair[1]}", list(g.chunk_ids), BATCH_FAILED, g.tries, g.letter.at)
            self.stats.batches_dead_lettered += 1
            self.llm.count(m2_pair.NAME, "batches_dead_lettered")
            self._given_up.remove(g)
            self._abandoned.difference_update((g.pair, cid) for cid in g.chunk_ids)

    # --- the work
    def _run(self, pairs: list[Pair], flush: bool) -> bool:
        did = False
        for pair in pairs:
            did |= self._run_pair(pair, flush)
        return did or bool(self._given_up)

    def _run_pair(self, pair: Pair, flush: bool) -> bool:
        subject_id, object_id = pair
        key = f"{subject_id}|{object_id}"
        now = self.clock()
        pending = [
            M2Snippet(chunk, marked, frozenset(ids))
            for chunk, marked, ids in self.store.m2_pending(subject_id, object_id, key)
            if (pair, chunk.id) not in self._abandoned
        ]
        seen = self._seen.setdefault(pair, {})
        first_seen = self._restored.pop(pair, now)
        for s in pending:
            seen.setdefault(s.chunk.id, first_seen)
        groups = batches(pending, self.k, key=lambda s: s.chunk)
        remainder = groups.pop() if groups and len(groups[-1]) < self.k and not flush else []
        if flush and groups and len(groups[-1]) < self.k:
            self.stats.remainders_flushed += 1
        failed: list[M2Snippet] = []
        for group in groups:
            if not self._send(pair, group):
                failed.extend(group)
        self._settle(pair, remainder, failed)
        return bool(groups)

    def _send(self, pair: Pair, group: list[M2Snippet]) -> bool:
        """One call; True when its answer parsed and was written with the batch's coverage. A failure that is
        neither an outage nor a stop (core/failures.py), of the call or of the write, is a failed try of the
        batch (retried, then dead-lettered); an outage or a stop propagates and the try did not happen. The
        try's LLM outcomes (`extract stats`) are counted once it is decided: covered (written) or failed."""
        subject, obj = EntityRef(pair[0], self.name_of(pair[0])), EntityRef(pair[1], self.name_of(pair[1]))
        chunk_ids = [s.chunk.id for s in group]
        self.stats.batches_sent += 1
        with self.llm.deferring() as outcomes:
            try:
                answer = run_m2(self.llm, subject, obj, group)
                if answer.parsed:
                    self._write(answer.interactions, f"{pair[0]}|{pair[1]}", chunk_ids)
            except Exception as exc:
                if must_stop(exc):
                    raise
                log.exception("M2 batch of %s|%s failed", *pair)
                self._failed(pair, chunk_ids, describe(exc))
                self.llm.settle(outcomes)
                return False
            if not answer.parsed:
                self._failed(pair, chunk_ids, "the answer did not parse, even after the corrective retry")
                self.llm.settle(outcomes)
                return False
            self.llm.settle(outcomes)
        self.stats.batches_covered += 1
        for cid in chunk_ids:
            self._tries.pop((pair, cid), None)
        return True

    def _write(self, interactions: list[Interaction], key: str, chunk_ids: list[str]) -> None:
        self.store.write_batch(interactions=interactions, m2_batches=[(key, chunk_ids)])
        if self.mirror:
            mirror_from_graph(self.store, self.mirror, (i.id for i in interactions))

    def _failed(self, pair: Pair, chunk_ids: list[str], problem: str) -> None:
        self.stats.batches_failed += 1
        self.llm.count(m2_pair.NAME, "batches_failed")
        tries = 0
        for cid in chunk_ids:
            self._tries[(pair, cid)] = tries_of = self._tries.get((pair, cid), 0) + 1
            tries = max(tries, tries_of)
        if tries < self.max_tries:
            log.warning("M2 batch of %s|%s failed (try %d of %d): %s", *pair, tries, self.max_tries, problem)
            return
        log.error("M2 batch of %s|%s dead-lettered after %d tries: %s", *pair, tries, problem)
        for cid in chunk_ids:
            self._tries.pop((pair, cid), None)
            self._abandoned.add((pair, cid))
        self._given_up.append(GiveUp(self._letter(pair, chunk_ids, tries, problem), pair, tuple(chunk_ids), tries))

    def _letter(self, pair: Pair, chunk_ids: list[str], tries: int, problem: str) -> DeadLetter:
        key = f"{pair[0]}|{pair[1]}"
        payload = json.dumps(
            {"pair": key, "subject_id": pair[0], "object_id": pair[1], "chunk_ids": chunk_ids, "tries": tries},
            ensure_ascii=False,
        )
        # Not one consumed message but a batch assembled from the graph: no partition or offset (-1).
        error = NewskgError(f"{tries} tries; last: {problem}", reason=BATCH_FAILED)
        return DeadLetter(
            reason=error.reason,
            detail=str(error)[:2000],
            stage=self.stage,
            topic=self.topic,
            partition=-1,
            offset=-1,
            key=key,
            payload_excerpt=payload[:500],
            payload_bytes=len(payload.encode("utf-8")),
            at=iso(utc_now()),
        )

    def _settle(self, pair: Pair, remainder: list[M2Snippet], failed: list[M2Snippet]) -> None:
        """What of the pair still waits, and since when; the graph remembers open pairs across restarts."""
        waiting = [s.chunk.id for s in [*failed, *remainder] if (pair, s.chunk.id) not in self._abandoned]
        was_open = pair in self._waiting
        if not waiting:
            self._waiting.pop(pair, None)
            self._seen.pop(pair, None)
            if was_open:
                self.store.m2_set_open([pair], False)
            return
        seen = self._seen.get(pair, {})
        self._seen[pair] = {cid: seen[cid] for cid in waiting if cid in seen}
        since = min(self._seen[pair].values(), default=self.clock())
        retry = any((pair, s.chunk.id) in self._tries for s in failed)
        self._waiting[pair] = _Waiting(since=since, retry=retry)
        if not was_open:
            self.store.m2_set_open([pair], True)
