"""Shared fixtures (helpers live in tests/support and are imported from there). Integration tests start the real
servers with the project's own command, `newskg services up`, in a private data dir, and stop them at the end of
the session; each test gets its own topics, consumer groups, graph and Qdrant folder on them (`isolated`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import LocalStack

if TYPE_CHECKING:  # imported where used: the unit lane should not pay for Kafka, Qdrant and embedding imports
    from graph.mirror.embed import MiniLMEmbedder
    from tests.support.graph_world import GraphWorld
    from tests.support.isolation import Isolated


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    local = LocalStack(tmp_path_factory.mktemp("newskg-data"))
    local.up()
    try:
        yield local
    finally:
        local.down()


@pytest.fixture(scope="session")
def llm_stack(stack: LocalStack) -> LocalStack:
    stack.up("--llm")
    return stack


@pytest.fixture
def isolated(stack: LocalStack, tmp_path: Path) -> Iterator[Isolated]:
    """This test's own topics, consumer groups, graph and Qdrant folder on the session's servers, removed after
    the test whether it passed or not. `isolated.fresh()` makes another world, `isolated.configured(...)` the same
    names with other settings; a module-scoped fixture uses `with Isolation(stack, folder) as isolation`."""
    from tests.support.isolation import Isolation

    with Isolation(stack, tmp_path) as isolation:
        yield isolation.new()


@pytest.fixture(scope="session")
def embedder() -> MiniLMEmbedder:
    from graph.mirror.embed import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture
def world(isolated: Isolated, embedder: MiniLMEmbedder) -> Iterator[GraphWorld]:
    """An initialised graph store and its Qdrant mirror in this test's isolation, as the extract stage opens them."""
    from tests.support.graph_world import open_graph_world

    with open_graph_world(isolated, embedder) as opened:
        yield opened
