"""Private names for one test on the shared servers, and their cleanup whatever the test's outcome.

Every name an isolation makes starts with its own prefix: the topics `PREFIX.articles|chunks|dlq|dedup|linking`, the
consumer groups `PREFIX-process|extract` (NEWSKG_GROUP_PREFIX), the graph `PREFIX.graph` (and any other graph a
test names `PREFIX.*`). The Qdrant local folder is the test's own. On exit everything under the prefix is removed
from the servers: the graphs dropped, the groups emptied of their static members (noida-db never expires them)
and deleted, the topics deleted, the Qdrant folder removed. A step that fails (a server the test killed) is
reported as a warning and the others still run.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafka import KafkaAdminClient

from newskg.core.settings import Settings
from newskg.graph.connection.falkor import FalkorConnection
from newskg.ingest.kafka.consumer import remove_static_members
from newskg.wiring import kafka_options, open_graph
from tests.support.cli import LocalStack

TOPICS = ("articles", "chunks", "dlq", "dedup", "linking")


def env_value(value: Any) -> str:
    """A setting's value as its NEWSKG_* variable: JSON for lists and dicts, lower-case booleans."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    return str(value)


@dataclass(frozen=True)
class Isolated:
    """One test's own topics, consumer groups, graph and Qdrant folder. `settings` for in-process code and `env`
    for the CLI in a subprocess say the same thing: both come from one set of overrides."""

    prefix: str
    settings: Settings
    env: dict[str, str]
    overrides: dict[str, Any] = field(repr=False)
    isolation: Isolation = field(repr=False)

    @property
    def topics(self) -> dict[str, str]:
        """articles, chunks, dlq, dedup, linking -> this test's topic name."""
        return {name: getattr(self.settings, f"topic_{name}") for name in TOPICS}

    def group(self, stage: str) -> str:
        return self.settings.consumer_group(stage)

    def configured(self, **overrides: Any) -> Isolated:
        """The same names with other settings (in both `settings` and `env`)."""
        return self.isolation.make(self.prefix, self.overrides | overrides)

    def graph_named(self, suffix: str) -> Isolated:
        """The same topics and groups with another graph of this test's, dropped with the others."""
        return self.configured(graph_database=f"{self.prefix}.{suffix}")

    def fresh(self, **overrides: Any) -> Isolated:
        """Another isolated world of the same test (its own prefix), cleaned up with this one."""
        return self.isolation.new(**overrides)


class Isolation:
    """Makes isolated worlds on `stack` and removes them on exit (also when the test failed)."""

    def __init__(self, stack: LocalStack, folder: Path):
        self.stack, self.folder = stack, folder
        self.prefixes: list[str] = []

    def __enter__(self) -> Isolation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.cleanup()

    def new(self, **overrides: Any) -> Isolated:
        prefix = f"t{uuid.uuid4().hex[:10]}"
        self.prefixes.append(prefix)
        names: dict[str, Any] = {f"topic_{name}": f"{prefix}.{name}" for name in TOPICS}
        names |= {
            "group_prefix": prefix,
            "graph_database": f"{prefix}.graph",
            "qdrant_path": self.folder / f"{prefix}.qdrant",  # local Qdrant admits one process: a folder each
            "qa_answerer": "extractive",  # the offline answerer, even when the LLM server runs
        }
        return self.make(prefix, names | overrides)

    def make(self, prefix: str, overrides: dict[str, Any]) -> Isolated:
        settings = self.stack.settings.model_copy(update=overrides)
        env = {**self.stack.env, **{f"NEWSKG_{key.upper()}": env_value(value) for key, value in overrides.items()}}
        return Isolated(prefix, settings, env, overrides, self)

    def cleanup(self) -> None:
        if not self.prefixes:
            return
        settings = self.stack.settings
        for step in (self._drop_graphs, self._delete_groups, self._delete_topics, self._remove_folders):
            try:
                step(settings)
            except Exception as exc:  # a server the test stopped or killed: report, go on with the rest
                warnings.warn(f"isolation cleanup {step.__name__} failed: {exc!r}", ResourceWarning, stacklevel=1)
        self.prefixes.clear()

    def owned(self, name: str) -> bool:
        return any(name.startswith(prefix) for prefix in self.prefixes)

    def _drop_graphs(self, settings: Settings) -> None:
        with open_graph(settings) as conn:
            assert isinstance(conn, FalkorConnection), "the test servers run FalkorDB"
            listed = conn.execute_command("GRAPH.LIST")
        for name in filter(self.owned, (n.decode() if isinstance(n, bytes) else str(n) for n in listed)):
            with open_graph(settings.model_copy(update={"graph_database": name})) as conn:
                assert isinstance(conn, FalkorConnection)
                conn.drop()

    def _delete_groups(self, settings: Settings) -> None:
        with _admin(settings) as admin:
            groups = [g["group_id"] if isinstance(g, dict) else g[0] for g in admin.list_groups()]
            mine = [g for g in groups if self.owned(g)]
            if not mine:
                return
            for group, described in admin.describe_groups(mine).items():
                static = [m["group_instance_id"] for m in described.get("members", []) if m.get("group_instance_id")]
                remove_static_members(kafka_options(settings), group, static)  # noida-db never expires them
            admin.delete_groups(mine)

    def _delete_topics(self, settings: Settings) -> None:
        with _admin(settings) as admin:
            mine = [t for t in admin.list_topics() if self.owned(t)]
            if mine:
                admin.delete_topics(mine, timeout_ms=10_000)

    def _remove_folders(self, _settings: Settings) -> None:
        for prefix in self.prefixes:
            shutil.rmtree(self.folder / f"{prefix}.qdrant", ignore_errors=True)


@contextlib.contextmanager
def _admin(settings: Settings) -> Iterator[KafkaAdminClient]:
    admin = KafkaAdminClient(**kafka_options(settings), request_timeout_ms=10_000)
    try:
        yield admin
    finally:
        admin.close()
