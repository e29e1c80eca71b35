"""Stable consumer-group member ids and the local lease that keeps two processes from sharing one."""

import os
import subprocess
import sys
import time

import pytest

from newskg.ingest.kafka import membership
from newskg.ingest.kafka.membership import GroupMembershipError, MemberInUse, claim_member, host_instance

BROKER, GROUP = "127.0.0.1:9092", "newskg-process"


@pytest.fixture(autouse=True)
def private_leases(tmp_path, monkeypatch):
    monkeypatch.setattr(membership, "lease_dir", lambda: tmp_path / "leases")


def test_an_explicit_instance_id_is_used_as_is_and_a_second_holder_is_refused_with_the_pid():
    first = claim_member(BROKER, GROUP, "process", "newskg-process-0")
    assert first.instance_id == "newskg-process-0-process" and not first.leave_on_close
    with pytest.raises(MemberInUse) as clash:
        claim_member(BROKER, GROUP, "process", "newskg-process-0")
    message = str(clash.value)
    assert "newskg-process-0-process" in message and GROUP in message and BROKER in message
    assert f"process {os.getpid()}" in message
    first.release()
    assert claim_member(BROKER, GROUP, "process", "newskg-process-0").instance_id == first.instance_id


def test_the_default_id_is_the_host_name_and_a_second_local_process_takes_the_next_slot():
    host = host_instance()
    one = claim_member(BROKER, GROUP, "process", None)
    two = claim_member(BROKER, GROUP, "process", None)
    assert (one.instance_id, two.instance_id) == (f"{host}-process", f"{host}.2-process")
    assert not one.leave_on_close and two.leave_on_close  # an extra local slot leaves the group when done
    # Other stages, groups and brokers are other members: no slot is taken from them.
    assert claim_member(BROKER, "newskg-extract", "extract", None).instance_id == f"{host}-extract"
    assert claim_member("10.0.0.1:9092", GROUP, "process", None).instance_id == f"{host}-process"
    one.release()
    assert claim_member(BROKER, GROUP, "process", None).instance_id == f"{host}-process"  # the freed slot first


def test_ids_kafka_would_reject_are_refused_up_front():
    with pytest.raises(GroupMembershipError, match="letters, digits"):
        claim_member(BROKER, GROUP, "process", "pod 0/x")


def test_a_killed_holder_frees_its_id_for_its_restart(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import sys, time; from pathlib import Path; from newskg.ingest.kafka import membership;"
                f"membership.lease_dir = lambda: Path({str(tmp_path / 'leases')!r});"
                f"held = membership.claim_member({BROKER!r}, {GROUP!r}, 'process', 'replica-0');"
                "print('held', flush=True);"
                "time.sleep(60)"
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(MemberInUse):
        claim_member(BROKER, GROUP, "process", "replica-0")
    holder.kill()  # SIGKILL: no clean-up code runs; the kernel drops the lock
    holder.wait(timeout=10)
    deadline = time.monotonic() + 5
    while True:
        try:
            assert claim_member(BROKER, GROUP, "process", "replica-0").instance_id == "replica-0-process"
            break
        except MemberInUse:
            assert time.monotonic() < deadline
            time.sleep(0.05)
