"""A consumer-group member with manual commits: the stage commits only after its downstream write succeeded.

The stages join as static members (ingest/kafka/membership.py): a restarted member takes its partitions back at
once. Ad-hoc consumers (tests, tools) may still join as dynamic members (no `member`)."""

from __future__ import annotations

import logging
from typing import Any

from newskg.ingest.kafka import client
from newskg.ingest.kafka.client import (
    CommitFailedError,
    ConsumerRecord,
    FencedInstanceIdError,
    KafkaError,
    KafkaTimeoutError,
    OffsetAndMetadata,
    RebalanceListener,
    TopicPartition,
    UnknownMemberIdError,
    error_code,
)
from newskg.ingest.kafka.membership import GroupMembershipError, StaticMember
from newskg.ingest.kafka.watchdog import CallWatchdog

log = logging.getLogger(__name__)

# Longest one batch may take between two polls before the member counts as stuck (its partitions and the batch
# go to the group again). kafka-python also sends it as the rebalance timeout: how long a rebalance waits for
# members to rejoin. Sized to a batch, not to the 10 minutes that used to hold a group after a crash.
DEFAULT_MAX_POLL_INTERVAL_MS = 180_000
# How long one look-up of a log end or a position may take (a member's position may need the group coordinator).
OFFSETS_TIMEOUT_MS = 10_000
# How long kafka-python's commit may take by itself: its request_timeout_ms (the default, 30 s, kept here).
COMMIT_TIMEOUT_S = 30.0


class _LogAssignment(RebalanceListener):
    def __init__(self, who: str):
        self.who = who

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        log.info("%s holds %s", self.who, _partitions(assigned) or "no partitions")

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        if revoked:
            log.info("%s gives back %s", self.who, _partitions(revoked))


def _partitions(tps: set[TopicPartition]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(tps, key=lambda t: (t.topic, t.partition)))


class GroupConsumer:
    def __init__(
        self,
        options: dict[str, Any],
        group: str,
        topics: list[str],
        max_poll_records: int = 200,
        member: StaticMember | None = None,
        max_poll_interval_ms: int = DEFAULT_MAX_POLL_INTERVAL_MS,
    ):
        self.group, self.member, self._options = group, member, options
        self.broker = ",".join(options["bootstrap_servers"])
        # Short session/heartbeat: a group joins in ~3 s instead of ~23 s on Tansu (measured here).
        self._consumer = client.consumer(
            options,
            group_id=group,
            group_instance_id=member.instance_id if member else None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            session_timeout_ms=6000,
            heartbeat_interval_ms=1000,
            max_poll_records=max_poll_records,
            max_poll_interval_ms=max_poll_interval_ms,
            fetch_max_bytes=16 * 1024 * 1024,
        )
        # poll(timeout_ms) and commit can wait forever on kafka-python's IO thread (ingest/kafka/watchdog.py).
        self._watchdog = CallWatchdog(client.io_loop(self._consumer), self.describe())
        self._consumer.subscribe(topics=topics, listener=_LogAssignment(self.describe()))
        log.info("joining %s", self.describe())

    def describe(self) -> str:
        if self.member:
            return self.member.describe()
        return f"consumer group {self.group} on broker {self.broker}"

    def poll(self, timeout_ms: int = 1000) -> list[ConsumerRecord]:
        try:
            with self._watchdog.bounding(f"poll({timeout_ms} ms)", timeout_ms / 1000):
                batches = self._consumer.poll(timeout_ms=timeout_ms)
        except FencedInstanceIdError as exc:
            raise self._fenced() from exc
        return [record for tp in sorted(batches, key=lambda t: (t.topic, t.partition)) for record in batches[tp]]

    def commit(self, records: list[ConsumerRecord]) -> bool:
        """Commit past the last record of each partition. A failed commit after a rebalance is logged, not raised:
        the records are re-delivered and the idempotent writes absorb them. Being fenced is raised: another
        process has joined with this member's id."""
        if not records:
            return True
        offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        for record in records:
            tp = TopicPartition(record.topic, record.partition)
            offsets[tp] = OffsetAndMetadata(max(record.offset + 1, offsets[tp].offset if tp in offsets else 0), "", -1)
        try:
            with self._watchdog.bounding("commit", COMMIT_TIMEOUT_S):
                self._consumer.commit(offsets)
            return True
        except FencedInstanceIdError as exc:
            raise self._fenced() from exc
        except (CommitFailedError, KafkaError) as exc:
            log.warning("commit failed for group %s (records will be re-delivered): %s", self.group, exc)
            return False

    def _fenced(self) -> GroupMembershipError:
        return GroupMembershipError(
            f"{self.describe()}: fenced by the broker, another process joined with the "
            "same instance id; give each replica its own NEWSKG_INSTANCE_ID"
        )

    def lag(self) -> int:
        """Messages still to read on the partitions this member holds (0 when it holds none)."""
        assigned = list(self._consumer.assignment())
        if not assigned:
            return 0
        with self._watchdog.bounding("lag", OFFSETS_TIMEOUT_MS / 1000 * (1 + len(assigned))):
            ends = self._consumer.end_offsets(assigned, timeout_ms=OFFSETS_TIMEOUT_MS)
            return sum(max(0, ends[tp] - self._position(tp)) for tp in assigned)

    def assignment(self) -> set[TopicPartition]:
        return set(self._consumer.assignment())

    def unread(self, partitions: set[TopicPartition]) -> dict[TopicPartition, int]:
        """partition → this member's position on it, for those of `partitions` it has records left to read on."""
        if not partitions:
            return {}
        with self._watchdog.bounding("unread", OFFSETS_TIMEOUT_MS / 1000 * (1 + len(partitions))):
            ends = self._consumer.end_offsets(list(partitions), timeout_ms=OFFSETS_TIMEOUT_MS)
            positions = {tp: self._position(tp) for tp in partitions}
        return {tp: at for tp, at in positions.items() if at < ends[tp]}

    def _position(self, tp: TopicPartition) -> int:
        """The member's position on `tp`; KafkaTimeoutError (an outage) when the broker did not tell it in time.
        kafka-python's position() without a timeout would wait for the group coordinator for ever."""
        at = self._consumer.position(tp, timeout_ms=OFFSETS_TIMEOUT_MS)
        if at is None:
            raise KafkaTimeoutError(
                f"{self.describe()}: no position on {tp.topic}[{tp.partition}] in {OFFSETS_TIMEOUT_MS} ms"
            )
        return at

    def rewind(self, partition: TopicPartition, offset: int) -> None:
        """Read `partition` again from `offset`: the records from there were polled but not handled (nor committed:
        the commit covers the handled records only)."""
        self._consumer.seek(partition, offset)

    def close(self) -> None:
        """A static member does not leave the group on close (Kafka's rule): its restart takes the partitions
        back at once. An extra local slot does leave (ingest/kafka/membership.py). The local lease is released."""
        try:
            self._watchdog.close()
            self._consumer.close(autocommit=False)
            if self.member and self.member.leave_on_close:
                outcome = remove_static_members(self._options, self.group, [self.member.instance_id])
                log.info("%s left the group: %s", self.describe(), outcome[self.member.instance_id])
        finally:
            if self.member:
                self.member.release()


def remove_static_members(options: dict[str, Any], group: str, instance_ids: list[str]) -> dict[str, str]:
    """Remove members that will not come back (a scale-down on a broker that never expires them, like noida-db),
    so the next rebalance does not wait for them. Returns instance id -> "removed" | "not a member" | an error."""
    admin = client.admin(options)
    outcome: dict[str, str] = {}
    try:
        for instance_id in instance_ids:  # one request each: the broker answers with member ids, not instance ids
            try:
                errors = list(admin.remove_group_members(group, [client.static_member(instance_id)]).values())
            except KafkaError as exc:  # a top-level error of the LeaveGroup request
                errors = [type(exc)]
            outcome[instance_id] = _removal(errors[0] if errors else UnknownMemberIdError)
    finally:
        admin.close()
    return outcome


def _removal(error: type[KafkaError]) -> str:
    if error_code(error) == 0:
        return "removed"
    return "not a member" if error is UnknownMemberIdError else error.__name__
