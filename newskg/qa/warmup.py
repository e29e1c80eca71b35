"""Warm-up before readiness: the QA API loads and exercises its models and connections in a background thread, and
`/readyz` answers 503 ("warming") until every step has run, so the first query after ready pays no model load.

The steps go through the public seams only (`Embedder.embed`, `GraphStore` reads, `VectorMirror.search`): any
embedding backend behind the `Embedder` protocol is warmed the same way. A step that fails (a server still
starting) is retried after `retry_s` from that step on; readiness says why meanwhile ("warmup_failed")."""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from newskg.graph.mirror.base import VectorMirror
    from newskg.qa.service import QAService

log = logging.getLogger(__name__)

WarmState = Literal["pending", "warming", "failed", "ready"]
WARM_TEXT = "warm-up"
Step = Callable[[], object]


class Warmup:
    """pending → (start) warming → ready, or warming → failed → (after retry_s) warming → … → ready.

    `timings_ms` holds each finished step's duration (the successful attempt); each listener
    (`add_listener`) is called with (step, seconds) as a step finishes (the API's metrics gauge)."""

    def __init__(self, steps: Mapping[str, Step], retry_s: float = 2.0):
        self._steps = dict(steps)
        self._retry_s = retry_s
        self._listeners: list[Callable[[str, float], None]] = []
        self._lock = threading.Lock()
        self._state: WarmState = "pending"
        self._error: str | None = None
        self._current: str | None = None
        self._done = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.timings_ms: dict[str, float] = {}

    @property
    def state(self) -> WarmState:
        with self._lock:
            return self._state

    @property
    def ready(self) -> bool:
        return self._done.is_set()

    def describe(self) -> str:
        """One line for the readiness body: what is warming, or why the last attempt failed."""
        with self._lock:
            state, error, current = self._state, self._error, self._current
        if state == "failed":
            return f"warm-up failed ({error}); retrying every {self._retry_s:g} s"
        if state == "pending":
            return "warm-up not started"
        if state == "warming":
            return f"loading and warming: {current or 'starting'} (steps: {', '.join(self._steps)})"
        return "warm"

    def add_listener(self, listener: Callable[[str, float], None]) -> None:
        self._listeners.append(listener)

    def start(self) -> None:
        """Run the steps in a daemon thread (idempotent: a second start while one runs or after ready does nothing)."""
        with self._lock:
            if self._thread is not None:
                return
            self._stop.clear()
            self._state = "warming"
            self._thread = threading.Thread(target=self.run, name="qa-warmup", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop retrying (shutdown); a step already running finishes on its own."""
        self._stop.set()

    def wait(self, timeout_s: float | None = None) -> bool:
        return self._done.wait(timeout_s)

    def run(self) -> None:
        """Every step in order, each retried until it succeeds or `stop()`; then ready."""
        pending = [name for name in self._steps if name not in self.timings_ms]
        for name in pending:
            if not self._run_step(name):
                return
        with self._lock:
            self._state, self._current, self._error = "ready", None, None
        self._done.set()
        log.info("QA warm-up done: %s", ", ".join(f"{k} {v:.0f} ms" for k, v in self.timings_ms.items()))

    def _run_step(self, name: str) -> bool:
        while not self._stop.is_set():
            with self._lock:
                self._state, self._current = "warming", name
            start = time.perf_counter()
            try:
                self._steps[name]()
            except Exception as exc:  # a server still starting: say so on /readyz, try again
                with self._lock:
                    self._state, self._error = "failed", f"{name}: {type(exc).__name__}: {exc}"
                log.warning("QA warm-up step %s failed (%s); retrying in %g s", name, exc, self._retry_s)
                self._stop.wait(self._retry_s)
                continue
            seconds = time.perf_counter() - start
            self.timings_ms[name] = round(seconds * 1000, 1)
            for listener in self._listeners:
                listener(name, seconds)
            return True
        return False


def service_steps(service: QAService) -> dict[str, Step]:
    """What the first hybrid query would otherwise pay for: the embedding model's load and first inference, the
    resolver's in-memory name index (read from the graph on first use), the mirror's first search of each
    collection (an Edge shard or local mode pages its segments in, a server client opens its connection pool),
    and the first run of each read a query makes; last, what every full garbage collection would otherwise pay
    for: scanning all that (`freeze_survivors`)."""
    steps: dict[str, Step] = {}
    mirror = service.mirror
    if mirror is not None:
        embedder = mirror.embedder
        steps["embedder"] = lambda: embedder.embed([WARM_TEXT])
    steps["graph"] = lambda: service.resolver.find(WARM_TEXT)  # loads the resolver's name index: a graph read
    if mirror is not None:
        steps["mirror"] = lambda: _search_each(mirror)
    steps["retrieval"] = lambda: _retrieve_once(service)
    steps["gc_freeze"] = freeze_survivors
    return steps


def freeze_survivors() -> None:
    """Collect, then move every object alive after the warm-up (modules, the models, the name index, the clients:
    ~190k objects in the QA bench's API) into the permanent generation, which collections never scan. Python's full
    collections otherwise walked them all, 100-300 ms holding the GIL on a busy 2-core machine, two or three times
    a minute under load: a stall every request in flight waited out (issue 30, the half-load tail). Later garbage
    is collected as before; a cycle frozen here and dropped later is never freed (a one-time, bounded amount)."""
    gc.collect()
    gc.freeze()


def _retrieve_once(service: QAService) -> None:
    """One hybrid query as a user's runs, for a known entity as of today: the resolver's as-of profile read, the
    timeline and evidence reads (the graph server plans each statement on its first run), the mirror's entity
    search and, without an LLM, the extractive answer. With an LLM only the retrieval: a warm-up spends no call."""
    import datetime as dt

    from newskg.graph.store.asof import AsOf
    from newskg.qa.query import parse_query

    today = dt.datetime.now(dt.UTC).date().isoformat()
    query = service.resolver.a_known_name() or WARM_TEXT  # the name index the graph step loaded: no second read
    try:
        if service.llm is None:  # the whole answer path, the extractive answer's embedding of sentences included
            service.ask(query, today, strategy="hybrid")
            return
        parsed = parse_query(query, today, service.resolver)
        entity_id = parsed.entity.id if parsed.entity else None
        service.retriever.retrieve("hybrid", entity_id, parsed.texts, AsOf(parsed.day, "ingested"), 10)
    except Exception as exc:  # only a head start: the servers were proven by the steps before; never block ready
        log.warning("warm-up retrieval skipped: %s", exc)


def _search_each(mirror: VectorMirror) -> None:
    """One search of each collection filtered by an entity, as QA's are: a search without one is a scan of every
    point on Qdrant Edge (no HNSW graph, graph/mirror/edge.py), ~0.46 s at 1 M points, to warm nothing QA reads."""
    from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, AsOfFilter

    where = AsOfFilter(day=99991231, ingested_ms=2**62, entity_id=WARM_TEXT)  # no such entity: nothing comes back
    for collection in (INTERACTIONS, CHUNKS):
        mirror.search(collection, WARM_TEXT, where, limit=1)
