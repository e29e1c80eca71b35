"""kill -9 of a process writing the Qdrant Edge mirror (issue 30): the shard it leaves either loads with every
batch it acknowledged, or is set aside on open and rebuilt by `graph reconcile`; after reconcile the mirror equals
the graph (ids and payload times). The writer is a real process writing the real FalkorDB and an Edge shard as the
extract stage does (tests/support/edge_writer.py), killed mid-write, with the index built every few batches so
kills also land inside optimize()."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from newskg.graph.mirror.base import CHUNKS, INTERACTIONS
from newskg.graph.mirror.reconcile import reconcile
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph, open_mirror
from tests.integration.test_mirror_consistency import assert_mirror_equals_graph
from tests.support.cli import REPO
from tests.support.edge_writer import HashEmbedder, batch
from tests.support.isolation import Isolated

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
ROUNDS = 4


def test_a_killed_writer_leaves_a_shard_that_loads_or_that_reconcile_rebuilds(isolated: Isolated):
    world = isolated.configured(mirror_index_after=600)  # optimize() every third batch: kills land in it too
    rng = random.Random(30)
    for round_ in range(ROUNDS):
        committed = kill_writer_mid_write(world, first=1000 * round_, wait_s=rng.uniform(0, 1.5))
        aside_before = set_aside(world)
        store = GraphStore(open_graph(world.settings))
        mirror = open_mirror(world.settings, HashEmbedder())  # a shard that does not load is set aside here
        try:
            held = mirror.graph_ids(INTERACTIONS) | mirror.graph_ids(CHUNKS)
            acknowledged = {r.id for n in committed for records in batch(n) for r in records}
            loaded = set_aside(world) == aside_before
            print(f"round {round_}: {len(committed)} batches acknowledged, shard loaded: {loaded}, held {len(held)}")
            assert not loaded or acknowledged <= held, f"round {round_}: acknowledged points lost"
            reconcile(store, mirror)
            assert_mirror_equals_graph(store, mirror)
        finally:
            mirror.close()
            store.conn.close()
    assert store_counts(world)["interactions"] >= ROUNDS * 3 * 100


def test_a_shard_that_does_not_load_is_set_aside_and_rebuilt_by_reconcile(isolated: Isolated):
    committed = kill_writer_mid_write(isolated, first=0, wait_s=0.2)
    for segment in isolated.settings.qdrant_local_path.glob("edge/*interactions/segments/*/segment.json"):
        segment.write_text("not a segment")  # what a torn write or a bad disk leaves
    store = GraphStore(open_graph(isolated.settings))
    mirror = open_mirror(isolated.settings, HashEmbedder())
    try:
        assert list(isolated.settings.qdrant_local_path.glob("edge/*interactions.unloadable-*"))
        assert mirror.count(INTERACTIONS) == 0 and mirror.count(CHUNKS) >= 100 * len(committed)
        reports = {r.collection: r for r in reconcile(store, mirror)}
        assert reports[INTERACTIONS].added_to_mirror == store.counts()["interactions"] > 0
        assert_mirror_equals_graph(store, mirror)
    finally:
        mirror.close()
        store.conn.close()


def kill_writer_mid_write(world: Isolated, first: int, wait_s: float) -> list[int]:
    """Start the writer at batch `first`, let it acknowledge three batches and write `wait_s` longer, SIGKILL it;
    the batches it acknowledged."""
    writer = subprocess.Popen(
        [sys.executable, "-m", "tests.support.edge_writer", str(first)],
        env=world.env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert writer.stdout is not None
    lines: list[str] = []
    try:
        for line in writer.stdout:
            lines.append(line)
            if sum(1 for seen in lines if seen.startswith("committed")) >= 3:
                break
        assert writer.poll() is None, "".join(lines)[-3000:]
        time.sleep(wait_s)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(30)
    lines += writer.stdout.readlines()  # what it printed before the kill: acknowledged
    return [int(line.split()[1]) for line in lines if line.startswith("committed")]


def set_aside(world: Isolated) -> set[str]:
    """The shards moved aside because they did not load."""
    return {p.name for p in world.settings.qdrant_local_path.glob("edge/*.unloadable-*")}


def store_counts(world: Isolated) -> dict[str, int]:
    with open_graph(world.settings) as conn:
        return GraphStore(conn).counts()
