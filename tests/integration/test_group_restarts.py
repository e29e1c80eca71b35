"""Restarts of the consumer stages on the real local broker (noida-db, which never expires a dead group member):
SIGKILL a real `newskg run` process during the group join and during a batch, restart it, and every message is
processed exactly once in effect; a clean restart is as quick; giving up on the group is a non-zero exit that
names the group and the broker; a replica that never comes back can be removed from the groups."""

import time

import pytest

from newskg.core.records import Chunk, ChunkSighting, decode_any
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.membership import host_instance
from newskg.ingest.kafka.reader import read_topic
from newskg.wiring import kafka_bootstrap, kafka_options, open_graph
from tests.support.cli import newskg, newskg_json
from tests.support.isolation import Isolated, Isolation
from tests.support.processes import StageProcess

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

SEED = 11  # the same seed gives the same synthetic articles in every test


def _world(isolated: Isolated, folder, **extra: str):
    """A world of this test's (one partition: the same arrival order in every run) with the same synthetic articles
    produced into its articles topic."""
    isolated = isolated.configured(topic_partitions=1)
    env = {**isolated.env, **extra}
    sent = newskg_json(
        "ingest",
        "synthetic",
        "--timelines",
        "1",
        "--events",
        "3",
        "--seed",
        str(SEED),
        "--out",
        str(folder / "synthetic"),
        env=env,
    )["sent"]
    return env, isolated.settings, sent


def _chunks(settings) -> tuple[set[str], set[tuple[str, str]]]:
    records = [decode_any(r.value) for r in read_topic(kafka_options(settings), settings.topic_chunks)]
    return (
        {r.id for r in records if isinstance(r, Chunk)},
        {(r.chunk_id, r.article_id) for r in records if isinstance(r, ChunkSighting)},
    )


def _graph_counts(settings) -> dict[str, int]:
    with open_graph(settings) as conn:
        return GraphStore(conn).counts()


def _articles_in_graph(settings) -> int:
    try:
        return _graph_counts(settings).get("articles", 0)
    except Exception:  # the stage has not created the graph yet
        return 0


@pytest.fixture(scope="module")
def undisturbed(stack, tmp_path_factory):
    """What a run that never crashed produces from the same articles."""
    folder = tmp_path_factory.mktemp("undisturbed")
    with Isolation(stack, folder) as isolation:
        env, settings, sent = _world(isolation.new(), folder)
        newskg_json("run", "all", "--until-idle", env=env)
        chunks, sightings = _chunks(settings)
        counts = _graph_counts(settings)
    assert counts["articles"] == sent > 20 and chunks
    return {"sent": sent, "chunks": chunks, "sightings": sightings, "counts": counts}


def test_sigkill_during_a_batch_then_until_idle_processes_everything_once(isolated, tmp_path, undisturbed):
    """The issue's reproduction: `run all`, SIGKILL mid-stream, then `run all --until-idle`."""
    env, settings, sent = _world(isolated, tmp_path, NEWSKG_PROCESS_BATCH_SIZE="4")
    first = StageProcess(["run", "all", "--json"], env)
    first.wait_until(lambda: _articles_in_graph(settings) > 0, what="the first graph write")
    first.kill()  # mid-stream: some batches written, the rest not (or written and not committed)
    assert _articles_in_graph(settings) < sent

    started = time.monotonic()
    again = newskg("run", "all", "--until-idle", "--json", env=env, check=False, timeout=600)
    elapsed = time.monotonic() - started
    assert again.returncode == 0, again.stdout + again.stderr
    assert _graph_counts(settings) == undisturbed["counts"]
    assert _chunks(settings) == (undisturbed["chunks"], undisturbed["sightings"])
    assert elapsed < 240, f"the restart took {elapsed:.0f} s"


def test_sigkill_during_the_join_and_during_a_batch_then_a_clean_restart(isolated, tmp_path, undisturbed):
    env, settings, _ = _world(isolated, tmp_path, NEWSKG_PROCESS_BATCH_SIZE="2")
    joining = StageProcess(["-v", "run", "process", "--json"], env)
    joining.wait_until(lambda: joining.saw("Sending JoinGroup"), what="the group join")
    joining.kill()  # between JoinGroup and the assignment

    batching = StageProcess(["run", "process", "--json"], env)
    batching.wait_until(lambda: _chunks(settings)[0], what="the first batch's chunks")
    batching.kill()

    # A clean stop (SIGTERM: finish the batch, commit) of a stage seen joining its group, which it does only after
    # it handles the signal. (Waiting for a third of the chunks alone passed at once when the killed stage had
    # outrun its kill on a busy machine; the SIGTERM then reached a process still importing, which died of it: -15.)
    stopping = StageProcess(["-v", "run", "process", "--json"], env)
    stopping.wait_until(lambda: stopping.saw("Sending JoinGroup"), what="the group join")
    stopping.wait_until(lambda: len(_chunks(settings)[0]) > len(undisturbed["chunks"]) // 3, what="more chunks")
    assert stopping.stop() == 0, stopping.output()

    started = time.monotonic()
    last = newskg(
        "run",
        "process",
        "--until-idle",
        "--json",
        env={**env, "NEWSKG_KAFKA_JOIN_TIMEOUT_S": "20"},
        check=False,
        timeout=300,
    )
    assert last.returncode == 0, last.stdout + last.stderr
    assert time.monotonic() - started < 60  # the partitions came back at once, not after a session or poll timeout
    assert _chunks(settings) == (undisturbed["chunks"], undisturbed["sightings"])


def test_giving_up_on_the_group_exits_nonzero_and_a_returning_replica_closes_the_hole(isolated, tmp_path, undisturbed):
    env, settings, _ = _world(isolated, tmp_path, NEWSKG_PROCESS_BATCH_SIZE="2")
    group = settings.consumer_group("process")
    first = {**env, "NEWSKG_INSTANCE_ID": "replica-a"}
    holder = StageProcess(["run", "process", "--json"], first)
    holder.wait_until(lambda: _chunks(settings)[0], what="the first batch's chunks")
    holder.kill()  # noida keeps replica-a as the owner of every partition

    other = {**env, "NEWSKG_INSTANCE_ID": "replica-b", "NEWSKG_KAFKA_JOIN_TIMEOUT_S": "5"}
    started = time.monotonic()
    stuck = newskg("run", "process", "--until-idle", "--json", env=other, check=False, timeout=120)
    assert stuck.returncode == 1
    message = stuck.stdout + stuck.stderr
    assert group in message and kafka_bootstrap(settings) in message and "replica-b" in message
    assert time.monotonic() - started < 60

    # replica-b will not come back: remove it, so the next rebalance does not wait for it.
    forgotten = newskg_json("run", "forget", "replica-b", env=env)
    assert forgotten["removed"] == [{"group": group, "member": "replica-b-process"}]
    back = newskg(
        "run",
        "process",
        "--until-idle",
        "--json",
        env={**first, "NEWSKG_KAFKA_JOIN_TIMEOUT_S": "20"},
        check=False,
        timeout=300,
    )
    assert back.returncode == 0, back.stdout + back.stderr
    assert _chunks(settings) == (undisturbed["chunks"], undisturbed["sightings"])


def test_two_processes_on_one_machine_never_share_a_member_id(isolated, tmp_path):
    env, _, _ = _world(isolated, tmp_path, NEWSKG_TOPIC_PARTITIONS="3")
    one = StageProcess(["run", "process", "--json"], {**env, "NEWSKG_INSTANCE_ID": "replica-c"})
    try:
        one.wait_until(lambda: one.saw(" holds "), what="the first member's partitions")
        clash = newskg(
            "run",
            "process",
            "--until-idle",
            "--json",
            env={**env, "NEWSKG_INSTANCE_ID": "replica-c"},
            check=False,
            timeout=120,
        )
        assert clash.returncode == 1
        assert "replica-c-process" in clash.stderr and str(one.proc.pid) in clash.stderr
    finally:
        one.stop()  # a static member stays in the group after a clean stop: remove it, or noida waits for it
        newskg("run", "forget", "replica-c", env=env)

    # With the default id, a second local process is a second member (the next slot), and it leaves when done.
    first = StageProcess(["run", "process", "--json"], env)
    try:
        first.wait_until(lambda: first.saw(" holds "), what="the first member's partitions")
        second = newskg("run", "process", "--until-idle", "--json", env=env, check=False, timeout=300)
        assert second.returncode == 0, second.stdout + second.stderr
        assert f"member {host_instance()}.2-process" in second.stderr and "left the group: removed" in second.stderr
    finally:
        first.stop()
    # No member was left behind to stall the group: a member with a new subscription is assigned at once.
    (tmp_path / "fresh").mkdir()
    same_group = isolated.fresh(group_prefix=isolated.settings.group_prefix)  # new topics, this test's groups
    fresh, _, _ = _world(same_group, tmp_path / "fresh")
    again = newskg(
        "run",
        "process",
        "--until-idle",
        "--json",
        env={**fresh, "NEWSKG_KAFKA_JOIN_TIMEOUT_S": "20"},
        check=False,
        timeout=300,
    )
    assert again.returncode == 0, again.stdout + again.stderr
