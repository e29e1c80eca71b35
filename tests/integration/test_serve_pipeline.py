"""`serve --pipeline` rides out a graph outage: when the graph server is killed under a running pipeline,
/readyz answers 503 naming the graph while the stages hold their batch (uncommitted, retried with backoff), and once
the server is back (same port, its AOF) the pipeline resumes by itself and the later stories are answered: no
restart by hand. A private stack: this test kills one of its servers. (A stage that stops for any other reason
still turns /readyz 503 and exits non-zero: tests/unit/test_stage_loop.py.)"""

import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from newskg.core.settings import Settings
from newskg.graph.store.store import GraphStore
from newskg.services.process import free_port
from newskg.wiring import open_graph
from tests.support.articles import STORIES, ingest_stories
from tests.support.cli import REPO, LocalStack
from tests.support.isolation import Isolation
from tests.support.processes import evidence, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.chaos]


def test_serve_pipeline_turns_unready_while_the_graph_is_down_and_recovers_by_itself(tmp_path):
    private = LocalStack(tmp_path / "data")
    private.up()
    server = None
    try:
        # No cleanup on exit: this test kills the graph server, and the private stack goes with the test.
        world = Isolation(private, tmp_path).new()
        env = world.env
        ingest_stories(env, tmp_path, STORIES[:1], "first.jsonl")
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "newskg", "serve", "--pipeline", "--port", str(port)],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        base = f"http://127.0.0.1:{port}"
        wait_for(lambda: httpx.get(base + "/readyz", timeout=2).json()["checks"].get("stages") is True, 120, server)
        wait_for(lambda: evidence(base, "2023-05-01"), 120, server)  # the stages run

        graph_pid = private.status()["graph"]["pid"]
        os.kill(graph_pid, signal.SIGKILL)  # the graph server dies under the running pipeline ...
        later = threading.Thread(target=ingest_stories, args=(env, tmp_path, STORIES[2:], "later.jsonl"), daemon=True)
        later.start()  # ... and the next chunks' write fails: held, not committed

        wait_for(lambda: httpx.get(base + "/readyz", timeout=5).status_code == 503, 60, server)
        readiness = httpx.get(base + "/readyz", timeout=5).json()
        assert readiness["checks"]["graph"] is False and readiness["checks"]["stages"] is True
        later.join(timeout=120)
        time.sleep(5)  # the held batch is retried with backoff meanwhile
        assert server.poll() is None

        private.up()  # the same port and data dir: the stages resume without a restart
        wait_for(lambda: httpx.get(base + "/readyz", timeout=5).status_code == 200, 120, server)
        # The story ingested during the outage is in the graph and answered.
        wait_for(lambda: _articles(world.settings) == 2, 180, server)
        assert any("Pharrell" in e["text"] or "Accor" in e["text"] for e in evidence(base, "2023-08-31"))
        assert server.poll() is None
    finally:
        if server and server.poll() is None:
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=30)
        private.down()


def _articles(settings: Settings) -> int:
    with open_graph(settings) as conn:
        return GraphStore(conn).counts().get("articles", 0)
