"""What a consumer group has committed, per partition, read from the broker as an operator would."""

from __future__ import annotations

import re

from newskg.core.settings import Settings
from newskg.ingest.kafka import client
from newskg.wiring import kafka_options


def lag_by_partition(settings: Settings, group: str, topic: str) -> dict[int, int]:
    """Partition -> messages the group has not committed yet (all of them where it never committed)."""
    options = kafka_options(settings)
    admin, offsets = client.admin(options), client.consumer(options)
    try:
        tps = client.partitions_of(topic, offsets.partitions_for_topic(topic) or ())
        ends = offsets.end_offsets(tps)
        committed = admin.list_group_offsets({group: None}).get(group, {})
        done = {tp.partition: meta.offset for tp, meta in committed.items() if tp.topic == topic and meta.offset >= 0}
        return {tp.partition: end - done.get(tp.partition, 0) for tp, end in ends.items()}
    finally:
        admin.close()
        offsets.close()


def held_partitions(output: str, topic: str) -> set[int]:
    """The partitions of `topic` a stage's log says it holds after its last assignment ("... holds t[0], t[3]")."""
    lines = [line for line in output.splitlines() if " holds " in line]
    if not lines:
        return set()
    return {int(n) for n in re.findall(re.escape(topic) + r"\[(\d+)\]", lines[-1])}
