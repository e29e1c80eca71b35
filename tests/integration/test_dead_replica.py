"""A replica SIGKILLed mid-stream that will not come back, with a live survivor in its group, on both local brokers
(noida-db, the session's; Tansu, `NEWSKG_LOCAL_BROKER=tansu`, started here). Every stage joins with a stable
instance id (static membership), and on both brokers the dead member keeps its partitions past the 6-s session
timeout: noida-db never rebalances, Tansu rebalances when the session expires but assigns the dead static member its
share again (seen for 90 s). So the survivor does not take over by itself (the hole, asserted). The ways out:
on noida-db `newskg run forget ID` removes the dead member and the survivor takes its partitions at once; Tansu 0.6
answers that LeaveGroup with UNKNOWN_MEMBER_ID (asserted), so there only the replica returning under its id heals
the hole (as test_scale_out.py shows on noida). Either way what waited on the orphaned partitions is consumed.

Tansu 0.6's fetches can lose records of multi-record batches (test_producer_order.py), so every article is sent
alone and consumption is read from the group's committed offsets; the exactly-once counts are proven on noida in
test_scale_out.py."""

from __future__ import annotations

import itertools
import os
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kafka.partitioner.default import murmur2

from core.records import RawArticle
from core.settings import Settings
from core.timeaxes import iso, utc_now
from ingest.kafka import client
from ingest.kafka.admin import TopicAdmin
from ingest.kafka.producer import RecordProducer
from newskg.services.process import free_port
from newskg.services.servers import TansuBroker, kafka_healthy
from newskg.wiring import kafka_options
from tests.support.cli import newskg, newskg_json
from tests.support.groups import held_partitions
from tests.support.processes import StageProcess, wait_while_stages_run

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

PARTITIONS = 4
# Past the 6-s session timeout (ingest/kafka/consumer.py) and Tansu's rebalance after it (~7 s after the kill).
HOLE_WATCHED_S = 20.0
TAKEOVER_BOUND_S = 30.0  # from `run forget` to the survivor holding every partition (a rebalance or two)


@dataclass(frozen=True)
class Broker:
    name: str
    env: dict[str, str]
    options: dict[str, Any]
    topic: str
    group: str


@pytest.fixture(params=["noida", "tansu"])
def broker(request: pytest.FixtureRequest, tmp_path) -> Iterator[Broker]:
    extra = {"NEWSKG_TOPIC_PARTITIONS": str(PARTITIONS), "NEWSKG_PROCESS_BATCH_SIZE": "1"}
    if request.param == "noida":  # the session's broker: this test's own topics and groups (isolated)
        world = request.getfixturevalue("isolated").configured(topic_partitions=PARTITIONS)
        settings = world.settings
        yield Broker(
            "noida", world.env | extra, kafka_options(settings), settings.topic_articles, world.group("process")
        )
        return
    port = free_port()
    proc = subprocess.Popen(
        TansuBroker().command(port, tmp_path, {}), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    bootstrap = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while not kafka_healthy(bootstrap):
            assert time.monotonic() < deadline and proc.poll() is None, "tansu did not start"
            time.sleep(0.2)
        env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")}
        env |= {"NEWSKG_DATA_DIR": str(tmp_path / "data"), "NEWSKG_KAFKA_BOOTSTRAP": bootstrap} | extra
        settings = Settings.model_construct(data_dir=tmp_path / "data", kafka_bootstrap=bootstrap)  # defaults, no env
        yield Broker("tansu", env, kafka_options(settings), settings.topic_articles, settings.consumer_group("process"))
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _url_on(partition: int, stem: str) -> str:
    """A URL whose key the producer's default partitioner (murmur2, as Kafka's) sends to `partition`."""
    for n in itertools.count():
        url = f"https://wire{n}.example/{stem}"
        if (murmur2(url.encode()) & 0x7FFFFFFF) % PARTITIONS == partition:
            return url
    raise AssertionError("unreachable")


def _send_one_by_one(broker: Broker, partitions: set[int], per_partition: int, round_: str) -> None:
    """Articles sent one message per request (Tansu loses records of multi-record batches)."""
    producer = RecordProducer(broker.options, linger_ms=0)
    try:
        for partition, n in itertools.product(sorted(partitions), range(per_partition)):
            text = f"Story {round_}-{n} on partition {partition}: the harbour reopened today. " * 6
            url = _url_on(partition, f"{round_}-{partition}-{n}")
            producer.send_all(broker.topic, [(url, RawArticle(url=url, text=text, fetched_at=iso(utc_now())))])
    finally:
        producer.close()


def _committed(broker: Broker) -> dict[int, int]:
    admin = client.admin(broker.options)
    try:
        offsets = admin.list_group_offsets({broker.group: None}).get(broker.group, {})
        return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == broker.topic}
    finally:
        admin.close()


@pytest.mark.timeout(240)
def test_a_dead_replica_s_partitions_wait_until_it_is_forgotten_then_the_survivor_takes_them(broker: Broker):
    ids = [f"k{uuid.uuid4().hex[:8]}-r{i}" for i in range(2)]
    TopicAdmin(broker.options).ensure_topics([broker.topic], partitions=PARTITIONS)
    replicas = [StageProcess(["run", "process", "--json"], broker.env | {"NEWSKG_INSTANCE_ID": i}) for i in ids]
    survivor, victim = replicas
    everything = set(range(PARTITIONS))
    try:
        wait_while_stages_run(
            lambda: all(len(held_partitions(r.output(), broker.topic)) == PARTITIONS // 2 for r in replicas),
            120, "two replicas holding two partitions each", replicas,
        )  # fmt: skip
        own, orphaned = held_partitions(survivor.output(), broker.topic), held_partitions(victim.output(), broker.topic)
        _send_one_by_one(broker, everything, 1, "before")  # mid-stream: both replicas have work
        wait_while_stages_run(
            lambda: all(_committed(broker).get(p, 0) >= 1 for p in everything), 60, "the first articles", replicas
        )
        victim.kill()
        _send_one_by_one(broker, everything, 2, "after")  # on the survivor's partitions and on the orphaned ones

        # The hole: the survivor drains its own partitions, the dead member's wait, past the session timeout.
        wait_while_stages_run(
            lambda: all(_committed(broker).get(p, 0) >= 3 for p in own), 60, "the survivor's own", [survivor]
        )
        time.sleep(HOLE_WATCHED_S)
        assert held_partitions(survivor.output(), broker.topic) == own, survivor.output()[-2000:]
        assert all(_committed(broker).get(p, 0) == 1 for p in orphaned), _committed(broker)

        forgotten = newskg_json("run", "forget", ids[1], env=broker.env)
        member = {"group": broker.group, "member": f"{ids[1]}-process"}
        started = time.monotonic()
        if broker.name == "noida":  # the dead member leaves; the survivor takes its partitions
            assert member in forgotten["removed"], forgotten
            holder = survivor
        else:  # Tansu 0.6 answers UNKNOWN_MEMBER_ID to a LeaveGroup by instance id: only the same id heals it
            assert member | {"reason": "not a member"} in forgotten["not_removed"], forgotten
            holder = StageProcess(["run", "process", "--json"], broker.env | {"NEWSKG_INSTANCE_ID": ids[1]})
            replicas.append(holder)
            started = time.monotonic()
        expected = everything if holder is survivor else orphaned
        wait_while_stages_run(
            lambda: held_partitions(holder.output(), broker.topic) == expected,
            TAKEOVER_BOUND_S + (0 if holder is survivor else 60), "the orphaned partitions taken", [survivor, holder],
        )  # fmt: skip
        healed_s = time.monotonic() - started
        wait_while_stages_run(
            lambda: all(_committed(broker).get(p, 0) >= 3 for p in orphaned), 60, "the orphaned", [survivor, holder]
        )
        assert all(r.stop() == 0 for r in {survivor, holder}), [r.output()[-2000:] for r in replicas]
        print({"broker": broker.name, "healed s": round(healed_s, 1), "committed": _committed(broker)})
    finally:
        for replica in replicas:
            if replica.proc.poll() is None:
                replica.kill()
        newskg("run", "forget", *ids, env=broker.env, check=False)
