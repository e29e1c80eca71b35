"""Stable consumer-group member ids (static membership, KIP-345) and the local lease that keeps two processes on
one machine from joining under the same id.

Why static: a member that restarts with the id it had takes its partitions back at once. Without it the group
waits for the dead member to be expired — never on noida-db, after ~11 s on Tansu, after session.timeout.ms on
Kafka (seen with kafka-python 3.0.12). A static member's clean close does not leave the group
either, so a restart after SIGTERM is as quick.

Why a lease: two live members with one id would both consume the same partitions on noida-db and Tansu (neither
fences the older one; seen here), and on Kafka the older one is fenced mid-batch. So a process holds an exclusive
file lock per (broker, group, member id) while it is a member; the kernel releases it when the process dies, so a
restarted process gets the same id back. An id set explicitly (NEWSKG_INSTANCE_ID) that is already held fails with
the holder's pid; the default id (the host name) moves on to the next free slot (`host.2`, `host.3`, ...), so a
second local process of one stage is a second static member. Such an extra slot is an ad-hoc helper, not a
replica meant to come back, so it leaves the group when it closes cleanly: on noida-db a static member that never
returns would otherwise hold its partitions, and stall every later rebalance, for good.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import re
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path

from newskg.core.errors import NewskgError

log = logging.getLogger(__name__)

MAX_LOCAL_SLOTS = 64
_INVALID = re.compile(r"[^A-Za-z0-9._-]")  # Kafka accepts only these in group.instance.id


class GroupMembershipError(NewskgError, RuntimeError):
    """This process cannot be (or stay) the group member it should be: the message names group, member, broker."""

    REASON = "group_membership"


class MemberInUse(GroupMembershipError):
    REASON = "member_in_use"


def lease_dir() -> Path:
    return Path(tempfile.gettempdir()) / "newskg-members"


class Lease:
    """An exclusive, non-blocking lock on a file; held while the file stays open."""

    def __init__(self, path: Path):
        self.path = path
        self._file = None

    def acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+")  # noqa: SIM115 - held open for the lease's lifetime
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        handle.truncate(0)
        handle.write(str(os.getpid()))
        handle.flush()
        self._file = handle
        return True

    def holder(self) -> str:
        try:
            return self.path.read_text().strip() or "?"
        except OSError:
            return "?"

    def release(self) -> None:
        if self._file is not None:
            self._file.close()  # closing drops the flock
            self._file = None


@dataclass
class StaticMember:
    group: str
    instance_id: str  # the group.instance.id sent to the broker: f"{instance}-{stage}"
    broker: str
    lease: Lease
    leave_on_close: bool = False  # an extra local slot (see above); replicas with their own id stay members

    def describe(self) -> str:
        return f"consumer group {self.group} on broker {self.broker} (member {self.instance_id})"

    def release(self) -> None:
        self.lease.release()


def host_instance() -> str:
    return _INVALID.sub("-", socket.gethostname()) or "newskg"


def member_instance_id(instance: str, stage: str) -> str:
    return f"{instance}-{stage}"


def _lease_for(broker: str, group: str, instance_id: str) -> Lease:
    key = hashlib.sha1(f"{broker}\0{group}\0{instance_id}".encode()).hexdigest()[:24]
    return Lease(lease_dir() / f"{key}.lock")


def claim_member(broker: str, group: str, stage: str, instance: str | None) -> StaticMember:
    """The member id this process joins `group` with, leased for as long as the process is a member."""
    if instance:
        if _INVALID.search(instance):
            raise GroupMembershipError(
                f"NEWSKG_INSTANCE_ID {instance!r} may hold only letters, digits, '.', '_' "
                "and '-' (Kafka's rule for group.instance.id)"
            )
        return _claim_exact(broker, group, member_instance_id(instance, stage))
    host = host_instance()
    for slot in range(1, MAX_LOCAL_SLOTS + 1):
        base = host if slot == 1 else f"{host}.{slot}"
        instance_id = member_instance_id(base, stage)
        lease = _lease_for(broker, group, instance_id)
        if lease.acquire():
            if slot > 1:
                log.info(
                    "group %s: %s is in use by another process on this machine; joining as %s",
                    group,
                    member_instance_id(host, stage),
                    instance_id,
                )
            return StaticMember(group, instance_id, broker, lease, leave_on_close=slot > 1)
    raise MemberInUse(
        f"{MAX_LOCAL_SLOTS} processes on this machine already run stage {stage!r} against broker "
        f"{broker}; set NEWSKG_INSTANCE_ID"
    )


def _claim_exact(broker: str, group: str, instance_id: str) -> StaticMember:
    lease = _lease_for(broker, group, instance_id)
    if not lease.acquire():
        raise MemberInUse(
            f"member {instance_id} of consumer group {group} on broker {broker} is already run by "
            f"process {lease.holder()} on this machine; give each replica its own NEWSKG_INSTANCE_ID"
        )
    return StaticMember(group, instance_id, broker, lease)
