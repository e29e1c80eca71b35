"""Shared fixtures. Integration tests start the real servers with the project's own command,
`newskg services up`, in a private data dir, and stop them at the end of the session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.settings import Settings

REPO = Path(__file__).resolve().parents[1]


def newskg(*args: str, env: dict[str, str], check: bool = True, timeout: float = 300) -> subprocess.CompletedProcess:
    """Run the real CLI in a subprocess, as a user would."""
    proc = subprocess.run(
        [sys.executable, "-m", "newskg", *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"newskg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def newskg_json(*args: str, env: dict[str, str]) -> dict:
    return json.loads(newskg(*args, "--json", env=env).stdout)


class LocalStack:
    """The servers of one data dir, with the env and Settings that point every command at them."""

    def __init__(self, data_dir: Path):
        self.data_dir = data_dir
        # The test stack never points at an outside server by accident: no NEWSKG_* from the caller.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")}
        self.env["NEWSKG_DATA_DIR"] = str(data_dir)

    @property
    def settings(self) -> Settings:
        return Settings(data_dir=self.data_dir, _env_file=None)

    def up(self, *flags: str) -> dict:
        return newskg_json("services", "up", *flags, env=self.env)

    def down(self) -> None:
        newskg("services", "down", env=self.env, check=False)

    def status(self) -> dict:
        return {
            s["name"]: s
            for s in json.loads(newskg("services", "status", "--json", env=self.env, check=False).stdout)["services"]
        }


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


def isolated_env(stack, tmp_path):
    """Private topics, graph and Qdrant folder for one test module on the shared servers."""
    prefix = f"t{uuid.uuid4().hex[:8]}"
    names = {k: f"{prefix}.{k}" for k in ("articles", "chunks", "dlq", "dedup")}
    env = {
        **stack.env,
        **{f"NEWSKG_TOPIC_{k.upper()}": v for k, v in names.items()},
        "NEWSKG_GRAPH_DATABASE": f"g{uuid.uuid4().hex[:8]}",
        "NEWSKG_QDRANT_PATH": str(tmp_path / "qdrant"),
        "NEWSKG_QA_ANSWERER": "extractive",
    }  # the offline answerer, even when the LLM server runs
    settings = stack.settings.model_copy(
        update={
            **{f"topic_{k}": v for k, v in names.items()},
            "graph_database": env["NEWSKG_GRAPH_DATABASE"],
            "qdrant_path": tmp_path / "qdrant",
            "qa_answerer": "extractive",
        }
    )
    return env, settings


SERVER_MARKERS = ("integration", "llm", "chaos")
# Fixtures that start the real servers, and the marker each implies.
SERVER_FIXTURES = {"stack": "integration", "llm_stack": "llm"}


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by marker
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Markers by place and need: every test under tests/integration is `integration`, every test that uses the
    llama.cpp server is `llm`; a unit test that carries a server marker or asks for a server is an error, so
    `make test-unit` never needs a server (chaos tests, which kill a server, are marked by hand)."""
    misplaced = []
    for item in items:
        parts = item.path.relative_to(REPO).parts
        implied = {SERVER_FIXTURES[f] for f in item.fixturenames if f in SERVER_FIXTURES}
        if parts[:2] == ("tests", "integration"):
            for marker in sorted(implied | {"integration"}):
                item.add_marker(marker)
        elif parts[:2] == ("tests", "unit"):
            carried = {m.name for m in item.iter_markers() if m.name in SERVER_MARKERS} | implied
            if carried:
                misplaced.append(f"{item.nodeid}: {', '.join(sorted(carried))}")
    if misplaced:
        raise pytest.UsageError("unit tests must not need a server or the LLM:\n" + "\n".join(misplaced))
