"""A commit refused because the group rebalanced (CommitFailedError: the member's generation is gone) is logged and
the stage goes on: the batch is re-delivered to whoever holds the partition now, and the idempotent writes absorb
it. Being fenced (another process joined with this member's id) stops the stage. A stand-in kafka-python consumer
raises the broker's answers; the real group paths are in tests/integration/test_scale_out.py."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from newskg.ingest.kafka import client
from newskg.ingest.kafka.client import CommitFailedError, ConsumerRecord, FencedInstanceIdError, OffsetAndMetadata
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.membership import GroupMembershipError

OPTIONS = {"bootstrap_servers": ["127.0.0.1:9"]}


class Refusing:
    """kafka-python's consumer as far as GroupConsumer uses it, its commits answered with `error`."""

    def __init__(self, error: Exception | None):
        self.error = error
        self.committed: list[dict[Any, OffsetAndMetadata]] = []

    def subscribe(self, topics: list[str], listener: object) -> None:
        pass

    def commit(self, offsets: dict[Any, OffsetAndMetadata]) -> None:
        if self.error:
            raise self.error
        self.committed.append(offsets)


def _consumer(monkeypatch: pytest.MonkeyPatch, error: Exception | None) -> tuple[GroupConsumer, Refusing]:
    stand_in = Refusing(error)
    monkeypatch.setattr(client, "consumer", lambda options, **config: stand_in)
    return GroupConsumer(OPTIONS, "g-extract", ["news.chunks"]), stand_in


def _records(*offsets: int) -> list[ConsumerRecord]:
    return [ConsumerRecord("news.chunks", 2, None, o, 0, 0, None, b"{}", [], None, -1, 2, -1) for o in offsets]


def test_a_commit_refused_after_a_rebalance_is_logged_and_not_raised(monkeypatch, caplog):
    consumer, _ = _consumer(monkeypatch, CommitFailedError("IllegalGeneration: the group rebalanced"))
    with caplog.at_level(logging.WARNING, logger="newskg.ingest.kafka.consumer"):
        assert consumer.commit(_records(7, 8)) is False
    assert "commit failed for group g-extract (records will be re-delivered)" in caplog.text


def test_a_commit_goes_past_the_last_record_of_each_partition(monkeypatch):
    consumer, stand_in = _consumer(monkeypatch, None)
    assert consumer.commit(_records(8, 7)) is True
    [offsets] = stand_in.committed
    assert [(tp.partition, meta.offset) for tp, meta in offsets.items()] == [(2, 9)]


def test_being_fenced_stops_the_stage(monkeypatch):
    consumer, _ = _consumer(monkeypatch, FencedInstanceIdError())
    with pytest.raises(GroupMembershipError, match="another process joined with the same instance id"):
        consumer.commit(_records(1))
