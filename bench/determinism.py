"""How much cross-document linking depends on arrival order: the same deduplicated chunk stream extracted (M0)
by one consumer in ingestion order, against other orders and two consumers with their own alias indexes.

The input goes through the real pipeline once (`newskg ingest files … --backfill` or `ingest synthetic`, then
`run process` into a 3-partition chunks topic on the local servers `newskg services up` starts in a temporary
folder); the chunks topic is then replayed into an empty FalkorDB graph per configuration:

  single      one consumer as the extract stage's ingestion-order gate hands the records on
              (ingest/kafka/ingestion_order.py), the partitions' batches arriving in turn from partition 0;
  reversed    the same gate, the turns starting from the last partition (another fetch timing);
  run         the real `newskg run extract --until-idle` (one consumer of the topic, the gate on);
  partitions  one consumer without the gate, reading the partitions one after the other, as polled;
  sorted      every record sorted by ingestion instant across partitions (what the gate gives when each partition
              is in ingestion order; a backfill's partitions are not: pages are backfilled as of publication);
  two         two consumers sharing the graph and the linking log (in memory here, on the broker for `run
              extract` replicas: extract/entities/link_log.py), each with its own in-memory alias index and its
              own partitions through the gate: {0, 1} and {2}, their batches interleaved (the `run extract`
              group with 2 replicas).

Each is compared with `single`: entities, chunk→entity links (MENTIONS) and interactions that only one side
has. Run: `.venv/bin/python -m bench.determinism [--pages DIR | --synthetic N] [--batch 16]`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bench.figures import Figure, emit, figure
from newskg.core.settings import Settings
from newskg.extract.entities.link_log import apply_entry
from newskg.extract.entities.linker import Linker
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.client import ConsumerRecord, TopicPartition
from newskg.ingest.kafka.ingestion_order import IngestionOrder, OrderKey, ingestion_key, merged
from newskg.ingest.kafka.reader import read_topic
from newskg.pipeline import extract_stage
from newskg.services.manager import ServiceManager
from newskg.wiring import Wiring, kafka_options, open_graph

REPO = Path(__file__).resolve().parents[1]
PAGES = REPO / "tests" / "fixtures" / "news-html"  # bundled; the README figures: the 91 benchmark pages


def newskg(env: dict, *args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "newskg", *args, "--json"], env=env, cwd=REPO, check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout)


# What a replay is compared on (module constants, so the Cypher registry lints them: tests/support/cypher_registry.py).
SNAPSHOT_ENTITIES = "MATCH (e:Entity) RETURN e.id AS id"
SNAPSHOT_LINKS = "MATCH (c:Chunk)-[:MENTIONS]->(e:Entity) RETURN c.id AS c, e.id AS e"
SNAPSHOT_INTERACTIONS = "MATCH (x:Interaction) RETURN x.id AS id"


def snapshot(store: GraphStore) -> dict[str, set]:
    read = store.conn.read
    return {
        "entities": {r["id"] for r in read(SNAPSHOT_ENTITIES)},
        "links": {(r["c"], r["e"]) for r in read(SNAPSHOT_LINKS)},
        "interactions": {r["id"] for r in read(SNAPSHOT_INTERACTIONS)},
    }


class MemoryLog:
    """One consumer's view of a linking log kept in memory: the entries every stage's batches put on it, read from
    where this consumer stopped (what LinkLog does on the broker)."""

    topic = "linking"

    def __init__(self, entries: list[bytes]):
        self.entries, self.read = entries, 0

    def catch_up(self, linker: Linker) -> int:
        applied = sum(apply_entry(linker, value) for value in self.entries[self.read :])
        self.read = len(self.entries)
        return applied


def replay(settings: Settings, consumers: list[list], batch: int) -> dict[str, set]:
    """Each consumer its own stage (own alias index), one shared graph and linking log; batches interleaved
    round-robin."""
    graph = f"bench{uuid.uuid4().hex[:8]}"
    local = settings.model_copy(update={"graph_database": graph})
    queues = [[records[i : i + batch] for i in range(0, len(records), batch)] for records in consumers]
    entries: list[bytes] = []
    try:
        with Wiring(local) as wiring:
            stages = [extract_stage(wiring, with_mirror=False, link_log=MemoryLog(entries)) for _ in consumers]
            while any(queues):
                for stage, queue in zip(stages, queues, strict=True):
                    if queue:
                        output = stage.handle(queue.pop(0))
                        entries += [m.record.to_bytes() for m in output.messages if m.topic == MemoryLog.topic]
            return snapshot(stages[0].store)
    finally:
        with open_graph(local) as conn:
            conn.drop()


class Arrival:
    """Records arriving `batch` at a time from the partitions in turn, starting with the first of
    `by_partition`, for the gate (its PartitionView and HeadReader): another order gives another fetch timing.
    (A consumer fetches every partition it holds; serving only the first until it is read would leave the gate,
    whose buffer is capped, waiting for the others.)"""

    def __init__(self, by_partition: list[list[ConsumerRecord]], batch: int):
        self.logs = {TopicPartition(p[0].topic, p[0].partition): p for p in by_partition if p}
        self.positions = dict.fromkeys(self.logs, 0)
        self.batch, self.turn = batch, 0

    def poll(self) -> list[ConsumerRecord]:
        ready = [tp for tp, log in self.logs.items() if self.positions[tp] < len(log)]
        if not ready:
            return []
        tp = ready[self.turn % len(ready)]
        self.turn += 1
        start = self.positions[tp]
        self.positions[tp] = min(len(self.logs[tp]), start + self.batch)
        return self.logs[tp][start : self.positions[tp]]

    def assignment(self) -> set[TopicPartition]:
        return set(self.logs)

    def unread(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: self.positions[tp] for tp in partitions if self.positions[tp] < len(self.logs[tp])}

    def rewind(self, partition: TopicPartition, offset: int) -> None:
        self.positions[partition] = next(i for i, r in enumerate(self.logs[partition]) if r.offset == offset)

    def key_at(self, partition: TopicPartition, offset: int) -> OrderKey | None:
        return ingestion_key(self.logs[partition][offset])


def gated(by_partition: list[list[ConsumerRecord]], batch: int) -> list[ConsumerRecord]:
    """The records in the order the gate hands them on, each batch ordered as the stage orders it."""
    arrival = Arrival(by_partition, batch)
    gate = IngestionOrder(arrival, arrival)
    handed: list[ConsumerRecord] = []
    while gate.buffered or arrival.unread(arrival.assignment()):
        handed += merged(gate.admit(arrival.poll()), ingestion_key)
    return handed


def run_extract(settings: Settings, env: dict[str, str]) -> dict[str, set]:
    """The real extract stage over the topic, in a graph of its own."""
    graph = f"bench{uuid.uuid4().hex[:8]}"
    newskg({**env, "NEWSKG_GRAPH_DATABASE": graph}, "run", "extract", "--until-idle")
    local = settings.model_copy(update={"graph_database": graph})
    with open_graph(local) as conn:
        try:
            return snapshot(GraphStore(conn))
        finally:
            conn.drop()


def compare(base: dict[str, set], other: dict[str, set]) -> dict[str, dict[str, int]]:
    return {
        kind: {
            "base": len(base[kind]),
            "only_base": len(base[kind] - other[kind]),
            "only_other": len(other[kind] - base[kind]),
        }
        for kind in base
    }


def figures(results: dict[str, dict[str, dict[str, int]]]) -> dict[str, Figure]:
    """Per configuration and kind, the items only one side has (either side), out of what `single` holds."""
    return {
        f"determinism_{config}_{kind}_differ": figure(
            n["only_base"] + n["only_other"], f"{kind} in one run only (of {n['base']} in single)"
        )
        for config, kinds in results.items()
        for kind, n in kinds.items()
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=Path, default=PAGES)
    parser.add_argument("--synthetic", type=int, default=0, help="Timelines of `ingest synthetic` instead.")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--json", action="store_true", help="only the figures object of bench/figures.py")
    args = parser.parse_args()
    data_dir = Path(tempfile.mkdtemp(prefix="bench-determinism-"))
    prefix = f"b{uuid.uuid4().hex[:6]}"
    names = {k: f"{prefix}.{k}" for k in ("articles", "chunks", "dlq", "dedup")}
    settings = Settings(
        data_dir=data_dir,
        topic_partitions=3,
        mirror_enabled=False,
        _env_file=None,
        **{f"topic_{k}": v for k, v in names.items()},
    )
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")},
        "NEWSKG_DATA_DIR": str(data_dir),
        "NEWSKG_TOPIC_PARTITIONS": "3",
        "NEWSKG_MIRROR_ENABLED": "false",
        "PYTHONPATH": str(REPO),
        **{f"NEWSKG_TOPIC_{k.upper()}": v for k, v in names.items()},
    }
    manager = ServiceManager(settings)
    manager.up(only={"broker", "graph"})
    try:
        if args.synthetic:
            newskg(env, "ingest", "synthetic", "--timelines", str(args.synthetic), "--out", str(data_dir / "neoqa"))
            source = f"ingest synthetic --timelines {args.synthetic}"
        else:
            newskg(env, "ingest", "files", str(args.pages), "--backfill", "--date", "2023-05-05")
            source = f"ingest files {args.pages} --backfill"
        newskg(env, "run", "process", "--until-idle")
        records = read_topic(kafka_options(settings), names["chunks"])
        by_partition = [[r for r in records if r.partition == p] for p in range(3)]
        base = replay(settings, [gated(by_partition, args.batch)], args.batch)
        own = [gated(by_partition[:2], args.batch), gated(by_partition[2:], args.batch)]
        results = {
            "reversed": compare(base, replay(settings, [gated(by_partition[::-1], args.batch)], args.batch)),
            "run": compare(base, run_extract(settings, env)),
            "partitions": compare(base, replay(settings, [[r for p in by_partition for r in p]], args.batch)),
            "sorted": compare(base, replay(settings, [sorted(records, key=ingestion_key)], args.batch)),
            "two": compare(base, replay(settings, own, args.batch)),
        }
        report = {
            "input": source,
            "chunk_records": len(records),
            "batch": args.batch,
            "partition_sizes": [len(p) for p in by_partition],
            "against_single": results,
        }
        table = Table(title=f"differences from one consumer through the ingestion-order gate ({source})")
        for column in ("configuration", "kind", "single", "only single", "only other"):
            table.add_column(column)
        for config, kinds in results.items():
            for kind, n in kinds.items():
                table.add_row(config, kind, str(n["base"]), str(n["only_base"]), str(n["only_other"]))
        Console(stderr=args.json).print(table)
        if args.json:
            emit(figures(results), " ".join(["python -m bench.determinism", *sys.argv[1:]]))
        else:
            print(json.dumps(report))
    finally:
        manager.down()


if __name__ == "__main__":
    main()
