"""The typed face of kafka-python, which ships no type information: the structs, errors and client calls this
project uses, declared once here. The rest of the code imports Kafka things from this module, never from `kafka`,
so the type checker sees precise types everywhere and the untyped library is met in this one file.

The structs are kafka-python's own namedtuples at run time (its clients check `isinstance(tp, TopicPartition)`);
the type checker sees NamedTuples with the same fields. The clients are kafka-python's classes, seen through
Protocols naming only the methods called here, with the types kafka-python documents for them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast, overload

__all__ = [
    "Admin",
    "CommitFailedError",
    "ConfigResource",
    "Consumer",
    "ConsumerRecord",
    "FencedInstanceIdError",
    "GroupMember",
    "InvalidProducerEpochError",
    "InvalidProducerIdMappingError",
    "IoLoop",
    "KafkaConnectionError",
    "KafkaError",
    "KafkaTimeoutError",
    "NodeNotReadyError",
    "OffsetAndMetadata",
    "OutOfOrderSequenceNumberError",
    "Producer",
    "ProducerFencedError",
    "RebalanceListener",
    "SendFuture",
    "TopicAlreadyExistsError",
    "TopicPartition",
    "UnknownMemberIdError",
    "UnknownProducerIdError",
    "admin",
    "consumer",
    "error_code",
    "io_loop",
    "log_reader",
    "partitions_of",
    "producer",
    "static_member",
    "topic_config",
]

# kafka-python has no stubs or py.typed; its clients are typed by the Protocols below. Its errors are plain
# exception classes, typed well enough as they are (re-exported from here); only their numeric code is not (a class
# attribute set to None on the base), read through error_code.
import kafka
import kafka.admin
from kafka.errors import (
    CommitFailedError,
    FencedInstanceIdError,
    InvalidProducerEpochError,
    InvalidProducerIdMappingError,
    KafkaConnectionError,
    KafkaError,
    KafkaTimeoutError,
    NodeNotReadyError,
    OutOfOrderSequenceNumberError,
    ProducerFencedError,
    TopicAlreadyExistsError,
    UnknownMemberIdError,
    UnknownProducerIdError,
)

if TYPE_CHECKING:

    class TopicPartition(NamedTuple):
        topic: str
        partition: int

    class OffsetAndMetadata(NamedTuple):
        offset: int
        metadata: str = ""
        leader_epoch: int = -1

    class ConsumerRecord(NamedTuple):
        """One consumed message (kafka.consumer.fetcher.ConsumerRecord)."""

        topic: str
        partition: int
        leader_epoch: int | None
        offset: int
        timestamp: int
        timestamp_type: int
        key: bytes | None
        value: bytes | None
        headers: list[tuple[str, bytes | None]]
        checksum: int | None
        serialized_key_size: int
        serialized_value_size: int
        serialized_header_size: int

else:
    from kafka.consumer.fetcher import ConsumerRecord
    from kafka.structs import OffsetAndMetadata, TopicPartition


def error_code(error: type[KafkaError]) -> int | None:
    """The Kafka protocol error code of an error class (0 for NoError); None for an error that has none."""
    code = getattr(error, "errno", None)
    return code if isinstance(code, int) else None


class RebalanceListener(kafka.ConsumerRebalanceListener):
    """kafka-python's listener base with the partition sets typed; subclasses override both hooks."""

    def on_partitions_revoked(self, revoked: set[TopicPartition]) -> None:
        pass

    def on_partitions_assigned(self, assigned: set[TopicPartition]) -> None:
        pass


class Consumer(Protocol):
    def subscribe(self, topics: list[str], *, listener: RebalanceListener) -> None: ...
    def assign(self, partitions: list[TopicPartition]) -> None: ...
    def assignment(self) -> set[TopicPartition]: ...
    def seek_to_beginning(self, *partitions: TopicPartition) -> None: ...
    def seek(self, partition: TopicPartition, offset: int) -> None: ...
    def partitions_for_topic(self, topic: str) -> set[int] | None: ...
    def poll(self, timeout_ms: int = 0) -> dict[TopicPartition, list[ConsumerRecord]]: ...
    @overload
    def position(self, partition: TopicPartition) -> int:
        """Without a timeout, a group member whose partition has no position yet waits for the group coordinator
        with no bound (kafka-python 3.0.12: _refresh_committed_offsets(timeout_ms=None)): only for log readers."""
        ...

    @overload
    def position(self, partition: TopicPartition, timeout_ms: int) -> int | None:
        """None when the position could not be found in `timeout_ms`."""
        ...

    def beginning_offsets(self, partitions: list[TopicPartition]) -> dict[TopicPartition, int]: ...
    def end_offsets(
        self, partitions: list[TopicPartition], timeout_ms: int | None = None
    ) -> dict[TopicPartition, int]: ...
    def commit(self, offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> None: ...
    def close(self, autocommit: bool = True) -> None: ...


class SendFuture(Protocol):
    def get(self, timeout: float | None = None) -> object:
        """Wait for the broker's acknowledgement; raises the send's error."""
        ...


class Producer(Protocol):
    def send(self, topic: str, *, key: bytes | None, value: bytes) -> SendFuture: ...
    def flush(self, timeout: float | None = None) -> None: ...
    def close(self, timeout: float | None = None) -> None: ...


class ConfigResource(Protocol):
    """kafka.admin.ConfigResource: built with config_resource()."""


class GroupMember(Protocol):
    """kafka.admin.MemberToRemove: built with static_member()."""


class Admin(Protocol):
    def list_topics(self) -> list[str]: ...
    def create_topics(
        self, new_topics: Mapping[str, Mapping[str, object]], *, raise_errors: bool, wait_for_metadata: bool
    ) -> object: ...
    def describe_configs(self, config_resources: list[ConfigResource]) -> dict[str, dict[str, dict[str, Any]]]:
        """resource type ("topic") -> resource name -> config name -> its description (with "value")."""
        ...

    def alter_configs(self, config_resources: list[ConfigResource]) -> object: ...
    def list_groups(self) -> list[dict[str, Any] | tuple[str, ...]]:
        """One entry per group: a dict with "group_id" (recent kafka-python) or a tuple starting with it."""
        ...

    def list_group_offsets(
        self, group_specs: Mapping[str, None]
    ) -> dict[str, dict[TopicPartition, OffsetAndMetadata]]: ...
    def api_versions(self) -> dict[int, tuple[int, int]]: ...
    def remove_group_members(self, group_id: str, members: list[GroupMember]) -> dict[GroupMember, type[KafkaError]]:
        """Member -> its error class (NoError, errno 0, when it was removed)."""
        ...

    def close(self) -> None: ...


class IoLoop:
    """kafka-python 3's event loop of one client (kafka.net.selector.NetworkSelector), seen through the two things
    the call watchdog (ingest/kafka/watchdog.py) needs. The client's calls (poll, commit, end_offsets...) run as
    tasks on the loop's IO thread while the calling thread waits for them with no timeout of its own
    (NetworkSelector.run: `event.wait()`); the call's timeout is kept by the task alone."""

    def __init__(self, net: Any):
        self._net = net

    def wakeup(self) -> None:
        """Make the IO thread leave select() and run its ready tasks (a task the loop was not woken for)."""
        self._net.wakeup()

    def fail_waiting_calls(self, error: BaseException) -> None:
        """Every call waiting on the loop raises `error` (their tasks go on; kafka-python's own way of giving up a
        wait, used when the loop stops)."""
        self._net._fail_pending_waiters(error)


def io_loop(kafka_client: object) -> IoLoop | None:
    """The event loop a kafka-python client runs its calls on; None for a version without one (or another shape)."""
    net = getattr(kafka_client, "_net", None)
    if net is None or not all(callable(getattr(net, name, None)) for name in ("wakeup", "_fail_pending_waiters")):
        return None
    return IoLoop(net)


def consumer(options: Mapping[str, Any], **config: Any) -> Consumer:
    """A KafkaConsumer with the connection options and this consumer's own config (kafka-python's keywords)."""
    return cast(Consumer, kafka.KafkaConsumer(**options, **config))


def log_reader(options: Mapping[str, Any], topic: str, **config: Any) -> tuple[Consumer, list[TopicPartition]]:
    """A consumer in no group, assigned every partition of `topic` (from the earliest offset unless it seeks): how a
    log is read whole or tailed (the dedup and linking logs, `read_topic`); and those partitions."""
    reader = consumer(options, group_id=None, enable_auto_commit=False, auto_offset_reset="earliest", **config)
    partitions = partitions_of(topic, reader.partitions_for_topic(topic) or ())
    reader.assign(partitions)
    return reader, partitions


def producer(options: Mapping[str, Any], **config: Any) -> Producer:
    return cast(Producer, kafka.KafkaProducer(**options, **config))


def admin(options: Mapping[str, Any], **config: Any) -> Admin:
    return cast(Admin, kafka.KafkaAdminClient(**options, **config))


def topic_config(topic: str, configs: Mapping[str, str] | None = None) -> ConfigResource:
    resource_type: object = kafka.admin.ConfigResourceType.TOPIC
    return cast(ConfigResource, kafka.admin.ConfigResource(resource_type, topic, configs=configs))


def static_member(instance_id: str) -> GroupMember:
    # MemberToRemove is public (in kafka.admin.__all__), but pyright does not see kafka.admin's re-export of it.
    return cast(
        GroupMember,
        kafka.admin.MemberToRemove(  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
            group_instance_id=instance_id
        ),
    )


def partitions_of(topic: str, numbers: Iterable[int]) -> list[TopicPartition]:
    return [TopicPartition(topic, n) for n in sorted(numbers)]
