"""A replica SIGKILLed mid-stream that will not come back, with a live survivor in its group (noida-db, the
session's broker). Every stage joins with a stable instance id (static membership), and the dead member keeps its
partitions past the 6-s session timeout: noida-db never rebalances, so the survivor does not take over by itself
(the hole, asserted). `newskg run forget ID` removes the dead member and the survivor takes its partitions at once;
what waited on them is then consumed. (The replica returning under its id heals it too: test_scale_out.py.)

Tansu 0.6, seen by hand and not tested: it rebalances when the session expires but assigns the dead static member
its share again; it answers `run forget` (a LeaveGroup by instance id) with UNKNOWN_MEMBER_ID; a restart under the
same id healed the group once in 14.4 s, and once never got its partitions within 60 s while the survivor's
assignment flip-flopped, so no assertion about it would be stable.

Articles are sent one message per request and consumption is read from the group's committed offsets; the
exactly-once counts are proven in test_scale_out.py."""

from __future__ import annotations

import itertools
import time
import uuid
from dataclasses import dataclass
from typing import Any

import pytest
from kafka.partitioner.default import murmur2

from core.records import RawArticle
from core.timeaxes import iso, utc_now
from ingest.kafka import client
from ingest.kafka.admin import TopicAdmin
from ingest.kafka.producer import RecordProducer
from newskg.wiring import kafka_options
from tests.support.cli import newskg, newskg_json
from tests.support.groups import held_partitions
from tests.support.processes import StageProcess, wait_while_stages_run

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

PARTITIONS = 4
# Past the 6-s session timeout (ingest/kafka/consumer.py).
HOLE_WATCHED_S = 20.0
TAKEOVER_BOUND_S = 30.0  # from `run forget` to the survivor holding every partition (a rebalance or two)


@dataclass(frozen=True)
class Broker:
    env: dict[str, str]
    options: dict[str, Any]
    topic: str
    group: str


@pytest.fixture
def broker(isolated) -> Broker:
    """The session's noida-db: this test's own topics and groups (isolated)."""
    world = isolated.configured(topic_partitions=PARTITIONS)
    extra = {"NEWSKG_TOPIC_PARTITIONS": str(PARTITIONS), "NEWSKG_PROCESS_BATCH_SIZE": "1"}
    return Broker(
        world.env | extra, kafka_options(world.settings), world.settings.topic_articles, world.group("process")
    )


def _url_on(partition: int, stem: str) -> str:
    """A URL whose key the producer's default partitioner (murmur2, as Kafka's) sends to `partition`."""
    for n in itertools.count():
        url = f"https://wire{n}.example/{stem}"
        if (murmur2(url.encode()) & 0x7FFFFFFF) % PARTITIONS == partition:
            return url
    raise AssertionError("unreachable")


def _send_one_by_one(broker: Broker, partitions: set[int], per_partition: int, round_: str) -> None:
    """Articles sent one message per request, each to the partition chosen."""
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
        started = time.monotonic()  # the dead member leaves; the survivor takes its partitions
        assert {"group": broker.group, "member": f"{ids[1]}-process"} in forgotten["removed"], forgotten
        wait_while_stages_run(
            lambda: held_partitions(survivor.output(), broker.topic) == everything,
            TAKEOVER_BOUND_S, "the orphaned partitions taken", [survivor],
        )  # fmt: skip
        healed_s = time.monotonic() - started
        wait_while_stages_run(
            lambda: all(_committed(broker).get(p, 0) >= 3 for p in orphaned), 60, "the orphaned", [survivor]
        )
        assert survivor.stop() == 0, survivor.output()[-2000:]
        print({"healed s": round(healed_s, 1), "committed": _committed(broker)})
    finally:
        for replica in replicas:
            if replica.proc.poll() is None:
                replica.kill()
        newskg("run", "forget", *ids, env=broker.env, check=False)
