"""Fan-out answering throughput, offline, on this machine.

Loads a synthetic graph into a fresh FalkorDB graph: `--hubs` hub entities (default 20), each with `--fanout`
neighbours (default 8) met on distinct days, every neighbour also in `--noise` other interactions (default 10),
each interaction stated by its own chunk. Every hub gives one FanOutQA-style question (the generated template:
"for each entity that H had a reported interaction with between A and B, on what day …?").

- graph answerer (evaluation/fanoutqa/answerers.py): offline decomposition, one as-of retrieval per sub-question
  (1 list + `fanout` attribute steps), aggregation into a dict;
- baseline, in the same run: one retrieval of k × fan-out chunks around the hub per question, and the dict read
  from that one context (every neighbour name found in a chunk → the chunk's day).

Prints sub-questions/s, questions/s and the share of reference entries each got right, and the ratio. Keep the
default short (a loaded 2-core machine). Run: `.venv/bin/python -m bench.fanout [--hubs N] [--fanout F]`.
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.figures import emit, figure
from bench.synthetic import interaction_between, one_sentence_chunk
from newskg.core.ids import entity_id
from newskg.core.records import Entity
from newskg.core.settings import Settings
from newskg.core.timeaxes import day_from_key, day_iso, day_key
from newskg.services.manager import ServiceManager
from newskg.wiring import open_graph

FIRST_DAY, AS_OF, WINDOW_DAYS = 20230101, 20231231, 365
K = 5


def _day(rng: random.Random) -> int:
    return day_key(day_from_key(FIRST_DAY).replace(month=rng.randint(1, 12), day=rng.randint(1, 28)))


def load(settings: Settings, hubs: int, fanout: int, noise: int) -> list[tuple[str, dict[str, str]]]:
    """The graph, and per hub its name and reference answer {neighbour: ISO day}."""
    from newskg.graph.store.store import GraphStore

    rng = random.Random(13)
    store = GraphStore(open_graph(settings))
    store.conn.drop()  # pyright: ignore[reportAttributeAccessIssue]  (both connection classes have drop; the protocol omits it)
    store.init()
    entities: list[Entity] = []
    facts: list[tuple[Entity, Entity, int]] = []
    questions = []
    for h in range(hubs):
        hub = Entity(id=entity_id(f"Hub Event {h}", "EVENT"), name=f"Hub Event {h}", type="EVENT")
        neighbours = [
            Entity(id=entity_id(f"Party {h} {n}", "ORG"), name=f"Party {h}x{n}", type="ORG") for n in range(fanout)
        ]
        days = rng.sample(range(1, 300), fanout)
        answer = {}
        for neighbour, offset in zip(neighbours, days, strict=True):
            day = day_key(day_from_key(FIRST_DAY) + dt.timedelta(days=offset))
            facts.append((hub, neighbour, day))
            answer[neighbour.name] = day_iso(day)
        entities += [hub, *neighbours]
        questions.append((hub.name, answer))
    others = [Entity(id=entity_id(f"Other {k}", "PERSON"), name=f"Other {k}", type="PERSON") for k in range(200)]
    for neighbour in [e for e in entities if e.type == "ORG"]:
        facts += [(neighbour, rng.choice(others), _day(rng)) for _ in range(noise)]
    chunks, interactions, mentions = [], [], []
    for n, (subject, obj, day) in enumerate(facts):
        text = f"{subject.name} met {obj.name} about matter {n}"
        chunk = one_sentence_chunk(n, f"On {day_iso(day)}, {text}.", day)
        chunks.append(chunk)
        mentions += [(chunk.id, subject.id), (chunk.id, obj.id)]
        interactions.append(
            interaction_between(
                subject,
                obj,
                text,
                day,
                ingested_ms=chunk.ingested_ms,
                chunk_ids=[chunk.id],
                ingested_at=chunk.ingested_at,
            )
        )
    for start in range(0, len(chunks), 1000):
        store.write_batch(
            chunks=chunks[start : start + 1000],
            entities=entities + others if start == 0 else (),
            mentions=[m for m in mentions if int(m[0].rsplit("_", 1)[1]) // 1000 == start // 1000],
            interactions=interactions[start : start + 1000],
        )
    return questions


def correct(reference: dict[str, str], answer: object) -> int:
    return sum(1 for k, v in reference.items() if isinstance(answer, dict) and answer.get(k) == v)


def run_graph(settings: Settings, questions: list[tuple[str, dict[str, str]]], fanout: int) -> dict:
    from newskg.evaluation.fanoutqa.answerers import FanoutSearch, GraphFanoutAnswerer
    from newskg.evaluation.fanoutqa.generate import QUESTION
    from newskg.graph.store.asof import AsOf
    from newskg.graph.store.store import GraphStore

    answerer = GraphFanoutAnswerer(GraphStore(open_graph(settings)), None, search=FanoutSearch(k=K, fanout=fanout))
    first = day_iso(day_key(day_from_key(AS_OF).replace(year=2022)))
    started = time.perf_counter()
    steps = right = 0
    for hub, reference in questions:
        trace = answerer.answer(hub, QUESTION.format(hub=hub, first=first, last=day_iso(AS_OF)), AsOf(AS_OF))
        steps += len(trace.steps)
        right += correct(reference, trace.answer)
    return {"seconds": time.perf_counter() - started, "sub_questions": steps, "right": right}


def run_baseline(settings: Settings, questions: list[tuple[str, dict[str, str]]], fanout: int) -> dict:
    """One retrieval of k × fan-out chunks around the hub; every neighbour name in a chunk → that chunk's day."""
    from newskg.graph.store.store import GraphStore
    from newskg.qa.query import EntityResolver
    from newskg.qa.retrieve import Retriever

    store = GraphStore(open_graph(settings))
    retriever, resolver = Retriever(store, None, backoff_days=WINDOW_DAYS), EntityResolver(store)
    started = time.perf_counter()
    right = 0
    for hub, reference in questions:
        best, _ = resolver.resolve(hub, AS_OF)
        found = retriever.retrieve_method("newsrag", "temporal", best.id, hub, AS_OF, K * fanout) if best else []
        answer: dict[str, str] = {}
        for chunk in sorted(found, key=lambda c: c.event_day):
            for name in reference:  # the names the context would have to surface
                if f" {name} " in f" {chunk.text} " and hub in chunk.text:
                    answer.setdefault(name, day_iso(chunk.event_day))
        right += correct(reference, answer)
    return {"seconds": time.perf_counter() - started, "sub_questions": len(questions), "right": right}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hubs", type=int, default=20, help="questions (one per hub)")
    parser.add_argument("--fanout", type=int, default=8, help="neighbours per hub")
    parser.add_argument("--noise", type=int, default=10, help="other interactions per neighbour")
    parser.add_argument("--json", action="store_true", help="one JSON object with every figure (table on stderr)")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-fanout-"))
    # pydantic-settings: its init takes _env_file and every field has a default; pyright sees neither
    settings = Settings(data_dir=data_dir, graph_database="bench_fanout", _env_file=None)  # pyright: ignore[reportCallIssue]
    manager = ServiceManager(settings)
    manager.up(only={"graph"})
    try:
        settings = settings.model_copy(update={"graph_uri": manager.state.load()["graph"].address})
        questions = load(settings, args.hubs, args.fanout, args.noise)
        graph = run_graph(settings, questions, args.fanout)
        baseline = run_baseline(settings, questions, args.fanout)
    finally:
        manager.down()
    entries = sum(len(r) for _, r in questions)
    if args.json:
        figures = {
            "fanout_sub_questions_per_s": figure(
                round(graph["sub_questions"] / graph["seconds"], 1), "sub-questions/s"
            ),
            "fanout_questions_per_s": figure(
                round(len(questions) / graph["seconds"], 2),
                "questions/s (baseline: one retrieval of k x fan-out)",
                round(len(questions) / baseline["seconds"], 2),
            ),
            "fanout_entries_right": figure(
                graph["right"], f"of {entries} (baseline: one retrieval)", baseline["right"]
            ),
        }
        emit(figures, " ".join(["python -m bench.fanout", *sys.argv[1:]]))
    table = Table(title=f"FanOutQA-style answering, {args.hubs} questions × {args.fanout} items, offline")
    for column in ("answerer", "retrievals", "sub-questions/s", "questions/s", "entries right"):
        table.add_column(column, justify="right")
    for name, r, retrievals in (
        ("graph (one retrieval per sub-question)", graph, graph["sub_questions"]),
        (f"baseline (one retrieval of k×fan-out = {K * args.fanout} chunks)", baseline, len(questions)),
    ):
        table.add_row(
            name,
            str(retrievals),
            f"{retrievals / r['seconds']:.1f}",
            f"{len(questions) / r['seconds']:.2f}",
            f"{r['right']}/{entries}",
        )
    console = Console(width=140, stderr=args.json)
    console.print(table)
    console.print(
        f"graph answerer: {graph['sub_questions'] / graph['seconds']:.1f} sub-questions/s; questions/s vs baseline: "
        f"{baseline['seconds'] / max(graph['seconds'], 1e-9):.2f}x"
    )


if __name__ == "__main__":
    main()
