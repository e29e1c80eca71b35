"""Topic creation and the topics/lag report (`newskg topics`)."""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass, field
from typing import Any

from newskg.ingest.kafka import client
from newskg.ingest.kafka.client import KafkaError, TopicAlreadyExistsError, TopicPartition

log = logging.getLogger(__name__)


@dataclass
class TopicReport:
    name: str
    partitions: int
    messages: int  # sum of end offsets
    lag: dict[str, int] = field(default_factory=dict[str, int])

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "partitions": self.partitions, "messages": self.messages, "lag": self.lag}


class TopicAdmin:
    def __init__(self, options: dict[str, Any]):
        self._options = options
        self._admin = client.admin(options, request_timeout_ms=10000)
        self._offsets = client.consumer(options)

    def ensure_topics(
        self, names: list[str], partitions: int, replication: int = 1, configs: dict[str, dict[str, str]] | None = None
    ) -> list[str]:
        """Create the missing topics; returns the ones created. Safe to call from several processes.
        `configs` (per topic, e.g. cleanup.policy) are set at creation and brought up to date on a topic that
        already exists (one created by an older version)."""
        configs = configs or {}
        existing = set(self._admin.list_topics())
        missing = [n for n in names if n not in existing]
        if missing:
            spec = {
                n: {"num_partitions": partitions, "replication_factor": replication, "configs": configs.get(n, {})}
                for n in missing
            }
            with contextlib.suppress(TopicAlreadyExistsError):  # another process won the race
                self._admin.create_topics(spec, raise_errors=True, wait_for_metadata=True)
        for name in names:
            if name not in missing and configs.get(name):
                self.align_configs(name, configs[name])
        return missing

    def topic_configs(self, topic: str) -> dict[str, str]:
        """The configs the broker reports as set on the topic (empty when it keeps none, as Tansu)."""
        answer = self._admin.describe_configs([client.topic_config(topic)])
        entries = answer.get("topic", {}).get(topic, {})
        return {key: entry["value"] for key, entry in entries.items()}

    def align_configs(self, topic: str, wanted: dict[str, str]) -> bool:
        """Set the wanted configs where the broker reports other values; False if the broker refused them."""
        current = self.topic_configs(topic)
        changes = {key: value for key, value in wanted.items() if current.get(key) != value}
        if not changes:
            return True
        try:
            self._admin.alter_configs([client.topic_config(topic, changes)])
        except (KafkaError, ValueError) as exc:  # ValueError: a broker that keeps no topic configs at all
            log.warning("could not set %s on topic %s: %s", changes, topic, exc)
            return False
        log.info("topic %s: set %s", topic, changes)
        return True

    def partitions(self, topic: str) -> list[TopicPartition]:
        return client.partitions_of(topic, self._offsets.partitions_for_topic(topic) or ())

    def end_offsets(self, topic: str) -> dict[TopicPartition, int]:
        tps = self.partitions(topic)
        return self._offsets.end_offsets(tps) if tps else {}

    def group_lag(self, group: str, topic: str) -> int | None:
        """Messages the group has not committed yet on topic; None when the group never committed there."""
        committed = self._admin.list_group_offsets({group: None}).get(group, {})
        ends = self.end_offsets(topic)
        mine = {tp: meta.offset for tp, meta in committed.items() if tp.topic == topic and meta.offset >= 0}
        if not mine:
            return None
        starts = self._offsets.beginning_offsets(list(ends)) if ends else {}
        return sum(end - mine.get(tp, starts.get(tp, 0)) for tp, end in ends.items())

    def report(self, include_internal: bool = False) -> list[TopicReport]:
        topics = sorted(t for t in self._admin.list_topics() if include_internal or not t.startswith("__"))
        groups = [g["group_id"] if isinstance(g, dict) else g[0] for g in self._admin.list_groups()]
        reports: list[TopicReport] = []
        for topic in topics:
            ends = self.end_offsets(topic)
            lag = {g: lag for g in groups if (lag := self.group_lag(g, topic)) is not None}
            reports.append(TopicReport(topic, len(ends), sum(ends.values()), lag))
        return reports

    def close(self) -> None:
        self._admin.close()
        self._offsets.close()
