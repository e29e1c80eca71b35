"""Where one answer's time goes: an in-process profile of `QAService.ask` plus the response's serialisation, by
phase, on the graph and mirror the QA bench built (bench/qa.py runs it on the service the API builds, in a process
of its own before the API starts).

The product's embedder remembers the vectors of recent texts (graph/mirror/embed_cache.CachingEmbedder), so a
question asked again embeds nothing; the profile forgets them (`forget()`, where the embedder has it) before each
counted answer, so every answer's phases include its query's embedding cold: what a question not asked before
costs. (The load runs' figures are as warm as their questions repeat: bench/qa.py reports the share.)

Each phase is timed *exclusively* (a call's time minus that of the timed calls inside it), in wall time and in
the process's CPU time (the answers run one at a time; ONNX Runtime's embedding threads count), so the phases add
up to the whole answer:

- parse: the query's date and words (qa/query.parse_query, less the resolver);
- resolve: the entity resolver, less its graph reads;
- read_graph: the graph store's reads (round trip, the client's result parsing, the typed rows);
- read_mirror: the vector mirror's reads (vectors and payloads by id, the filtered search);
- embed: the embedder (the query's forms, and whatever else a request embeds: `embedded` counts texts by the
  phase that asked);
- rank: retrieval's own work (similarities, rings, fusion, diversity), less its reads and embeddings;
- answer: the extractive answer (sentence choice), less its embeddings;
- serialise: the result to JSON bytes (as the API does: `orjson.dumps(result.as_dict())`);
- other: the rest of `ask` (the result's assembly).

The wrappers are set on the instances (and on qa.service's module names for parse and answer) for the profile only
and taken off after it."""

from __future__ import annotations

import cProfile
import io
import pstats
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

PHASES = ("parse", "resolve", "read_graph", "read_mirror", "embed", "rank", "answer", "serialise", "other")
GRAPH_READS = (
    "timeline",
    "evidence_sources",
    "entity_fact_ids",
    "entity_chunks",
    "find_entities",
    "entity_names",
    "entity_profiles",
    "ingested_late",
)
MIRROR_READS = ("vectors", "payloads", "search_vector")

REPO = Path(__file__).resolve().parents[1]  # profile rows name this repository's files relative to it


@dataclass
class _Frame:
    phase: str
    wall: float
    cpu: float
    child_wall: float = 0.0
    child_cpu: float = 0.0


@dataclass
class Phases:
    """Exclusive wall and CPU seconds per phase, for calls made on one thread."""

    wall: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    cpu: defaultdict[str, float] = field(default_factory=lambda: defaultdict(float))
    embedded: Counter[str] = field(default_factory=Counter[str])  # texts embedded, by the phase that asked
    embed_calls: Counter[str] = field(default_factory=Counter[str])
    _stack: list[_Frame] = field(default_factory=list[_Frame])

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        frame = _Frame(name, time.perf_counter(), time.process_time())
        self._stack.append(frame)
        try:
            yield
        finally:
            self._stack.pop()
            wall, cpu = time.perf_counter() - frame.wall, time.process_time() - frame.cpu
            self.wall[name] += wall - frame.child_wall
            self.cpu[name] += cpu - frame.child_cpu
            if self._stack:
                self._stack[-1].child_wall += wall
                self._stack[-1].child_cpu += cpu

    def wrap(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return fn(*args, **kwargs)

        return timed

    def wrap_embed(self, fn: Callable[[list[str]], list[list[float]]]) -> Callable[[list[str]], list[list[float]]]:
        def embed(texts: list[str]) -> list[list[float]]:
            asker = self._stack[-1].phase if self._stack else "other"
            self.embedded[asker] += len(texts)
            self.embed_calls[asker] += 1
            with self.phase("embed"):
                return fn(texts)

        return embed


@contextmanager
def instrumented(service: Any, phases: Phases) -> Iterator[None]:
    """Time `service` (a qa.service.QAService) by phase while inside."""
    import newskg.qa.service as service_module

    patched: list[tuple[Any, str, Any, bool]] = []  # (object, attribute, old value, was an instance attribute)

    def patch(obj: Any, name: str, value: Any) -> None:
        patched.append((obj, name, getattr(obj, name), name in getattr(obj, "__dict__", {})))
        setattr(obj, name, value)

    store, mirror = service.store, service.mirror
    patch(service_module, "parse_query", phases.wrap("parse", service_module.parse_query))
    patch(service_module, "generate", phases.wrap("answer", service_module.generate))
    patch(service.resolver, "find", phases.wrap("resolve", service.resolver.find))
    patch(service.retriever, "retrieve", phases.wrap("rank", service.retriever.retrieve))
    for name in GRAPH_READS:
        patch(store, name, phases.wrap("read_graph", getattr(store, name)))
    patch(store.conn, "read", phases.wrap("read_graph", store.conn.read))
    if mirror is not None:
        for name in MIRROR_READS:
            patch(mirror, name, phases.wrap("read_mirror", getattr(mirror, name)))
        patch(mirror.embedder, "embed", phases.wrap_embed(mirror.embedder.embed))
    try:
        yield
    finally:
        for obj, name, old, own in reversed(patched):
            if own or obj is service_module:
                setattr(obj, name, old)
            else:
                delattr(obj, name)


def questions(asked: list[tuple[str, str]], n: int, seed: int = 5) -> list[tuple[str, str]]:
    """n (query, date) pairs as the bench's clients ask them: drawn from the graph's questions (bench/qa_graph.py
    asked_of: an entity in the news on its day)."""
    rng = random.Random(seed)
    return [rng.choice(asked) for _ in range(n)]


def answer_once(service: Any, query: str, date: str, strategy: str, phases: Phases | None = None) -> bytes:
    """One answer as the API gives it: ask, then serialise."""
    with phases.phase("other") if phases else _nothing():
        result = service.ask(query, date, k=10, strategy=strategy)
        with phases.phase("serialise") if phases else _nothing():
            return orjson.dumps(result.as_dict())


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def forgetting(service: Any) -> Callable[[], None]:
    """The call that empties the embedder's cache of recent texts before a counted answer (its query then embeds
    cold); a no-op without a mirror or with an embedder that remembers nothing."""
    embedder = service.mirror.embedder if service.mirror is not None else None
    forget: Callable[[], None] | None = getattr(embedder, "forget", None)
    return forget or (lambda: None)


def profile(service: Any, asked: list[tuple[str, str]], strategy: str, n: int, top: int = 12) -> dict[str, Any]:
    """n answers timed by phase (ms per answer, wall and CPU), then n more under cProfile: its top functions by
    own time; each counted answer's query embedded cold (the embedder's cache forgotten before it, outside the
    timing). Warmed first by a few answers that are not counted."""
    for query, date in questions(asked, 5, seed=1):
        answer_once(service, query, date, strategy)
    forget, phases = forgetting(service), Phases()
    wall = cpu = 0.0
    with instrumented(service, phases):
        for query, date in questions(asked, n):
            forget()
            wall0, cpu0 = time.perf_counter(), time.process_time()
            answer_once(service, query, date, strategy, phases)
            wall, cpu = wall + time.perf_counter() - wall0, cpu + time.process_time() - cpu0
    profiler = cProfile.Profile()
    for query, date in questions(asked, n, seed=6):
        forget()
        profiler.enable()
        answer_once(service, query, date, strategy)
        profiler.disable()
    return {
        "answer_paths": answer_paths(service, asked, strategy, min(n, 50)),
        "strategy": strategy,
        "answers": n,
        "wall_ms": round(wall * 1000 / n, 3),
        "cpu_ms": round(cpu * 1000 / n, 3),
        "phases": {
            p: {"wall_ms": round(phases.wall[p] * 1000 / n, 3), "cpu_ms": round(phases.cpu[p] * 1000 / n, 3)}
            for p in PHASES
        },
        "embedded_texts_per_answer": {p: round(c / n, 2) for p, c in sorted(phases.embedded.items())},
        "embed_calls_per_answer": {p: round(c / n, 2) for p, c in sorted(phases.embed_calls.items())},
        "cprofile_top": top_functions(profiler, n, top),
    }


def answer_paths(service: Any, asked: list[tuple[str, str]], strategy: str, n: int) -> dict[str, Any]:
    """The answer's CPU ms on the same evidence both ways, in the same run: reusing retrieval's similarities (the
    evidence as retrieved), and embedding every evidence sentence per request (the evidence without them: what
    qa/answer did before issue 30). Empty where the evidence carries no similarity (before issue 30) or there is
    no embedder. (On the bench's mirror of random vectors the two choose differently: only the cost compares.)"""
    from dataclasses import fields, replace

    from newskg.qa.answer import extractive
    from newskg.qa.evidence import Evidence
    from newskg.qa.query import parse_query

    embedder = service.mirror.embedder if service.mirror is not None else None
    if embedder is None or "similarity" not in {f.name for f in fields(Evidence)}:
        return {}
    forget = forgetting(service)
    reuse = per_request = 0.0
    answered = 0
    for query, date in questions(asked, n, seed=7):
        evidence = service.ask(query, date, k=10, strategy=strategy).evidence
        if not evidence:
            continue
        texts = parse_query(query, date, service.resolver).texts
        stripped = [replace(e, similarity=None) for e in evidence]
        forget()  # each path embeds what it needs cold, as a question not asked before would
        start = time.process_time()
        extractive(texts, evidence, embedder)
        middle = time.process_time()
        forget()
        extractive(texts, stripped, embedder)
        reuse, per_request = reuse + middle - start, per_request + time.process_time() - middle
        answered += 1
    if not answered:
        return {}
    return {
        "answers": answered,
        "reuse_cpu_ms": round(reuse * 1000 / answered, 3),
        "embed_per_request_cpu_ms": round(per_request * 1000 / answered, 3),
    }


def top_functions(profiler: cProfile.Profile, n: int, top: int) -> list[dict[str, Any]]:
    """The functions with the most own time (ms per answer), with their cumulative time, under cProfile."""
    stats = pstats.Stats(profiler, stream=io.StringIO())
    rows: list[dict[str, Any]] = []
    entries: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # pyright: ignore[reportAttributeAccessIssue,reportUnknownMemberType]
    for (path, line, name), (_, calls, own, cumulative, _) in sorted(entries.items(), key=lambda item: -item[1][2])[
        :top
    ]:
        short = path.split("site-packages/")[-1].removeprefix(f"{REPO}/")
        rows.append(
            {
                "function": f"{short}:{line}({name})",
                "calls_per_answer": round(calls / n, 1),
                "own_ms": round(own * 1000 / n, 3),
                "cumulative_ms": round(cumulative * 1000 / n, 3),
            }
        )
    return rows
