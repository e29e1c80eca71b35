"""Shared fixtures (helpers live in tests/support and are imported from there). Integration tests start the real
servers with the project's own command, `newskg services up`, in a private data dir, and stop them at the end of
the session; each test gets its own topics, consumer groups, graph and Qdrant folder on them (`isolated`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import REPO, LocalStack

if TYPE_CHECKING:  # imported where used: the unit lane should not pay for Kafka, Qdrant and embedding imports
    from newskg.graph.mirror.embed import MiniLMEmbedder
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
    from newskg.graph.mirror.embed import MiniLMEmbedder

    return MiniLMEmbedder()


@pytest.fixture
def world(request: pytest.FixtureRequest, isolated: Isolated, embedder: MiniLMEmbedder) -> Iterator[GraphWorld]:
    """An initialised graph store and its mirror in this test's isolation, as the extract stage opens them: on the
    default engine, or on each of tests/support/graph_world.MIRROR_ENGINES where a test parametrizes `world`
    indirectly with them (the mirror contract tests)."""
    from tests.support.graph_world import open_graph_world

    engine = getattr(request, "param", None)
    with open_graph_world(isolated.configured(mirror_engine=engine) if engine else isolated, embedder) as opened:
        yield opened


SERVER_MARKERS = ("integration", "llm", "chaos")
# Fixtures that start the real servers, and the marker each implies.
SERVER_FIXTURES = {"stack": "integration", "llm_stack": "llm"}


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers by place and need: every test under tests/integration is `integration`, every test under
    tests/chaos is `integration` and `chaos` (it kills servers of its own), every test that uses the llama.cpp server
    is `llm`; a unit test that carries a server marker or asks for a server is an error, so `make test-unit` never
    needs a server (chaos tests under tests/integration, which kill a stage, are marked by hand)."""
    misplaced = []
    for item in items:
        parts = item.path.relative_to(REPO).parts
        implied = {SERVER_FIXTURES[f] for f in item.fixturenames if f in SERVER_FIXTURES}
        if parts[:2] == ("tests", "integration"):
            for marker in sorted(implied | {"integration"}):
                item.add_marker(marker)
        elif parts[:2] == ("tests", "chaos"):  # kills servers of their own (tests/chaos/conftest.py)
            for marker in sorted(implied | {"integration", "chaos"}):
                item.add_marker(marker)
        elif parts[:2] == ("tests", "unit"):
            carried = {m.name for m in item.iter_markers() if m.name in SERVER_MARKERS} | implied
            if carried:
                misplaced.append(f"{item.nodeid}: {', '.join(sorted(carried))}")
    if misplaced:
        raise pytest.UsageError("unit tests must not need a server or the LLM:\n" + "\n".join(misplaced))
