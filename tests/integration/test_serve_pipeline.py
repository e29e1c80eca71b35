"""`serve --pipeline` never dies silently: when its stages stop for real (here: the graph server is killed under
a running pipeline, so the extract stage's write fails), /readyz answers 503 with the stages named, and the
process exits non-zero. A private stack: this test kills one of its servers."""

import os
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

from newskg.services.process import free_port
from tests.support.articles import STORIES, ingest_stories
from tests.support.cli import REPO, LocalStack
from tests.support.isolation import Isolation
from tests.support.processes import evidence, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.chaos]


def test_serve_pipeline_turns_unready_and_exits_nonzero_when_its_stages_stop(tmp_path):
    private = LocalStack(tmp_path / "data")
    private.up()
    server = None
    try:
        # No cleanup on exit: this test kills the graph server, and the private stack goes with the test.
        env = Isolation(private, tmp_path).new().env
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
        # ... and the next chunk's write fails. Ingested in the background: the stages can fail before the ingest
        # command returns, and /readyz answers 503 only for the grace period (a few seconds) before the exit.
        later = threading.Thread(target=ingest_stories, args=(env, tmp_path, STORIES[2:], "later.jsonl"), daemon=True)
        later.start()

        deadline, readiness = time.monotonic() + 120, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                response = httpx.get(base + "/readyz", timeout=5)
                if response.json()["checks"].get("stages") is False:
                    readiness = response
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        later.join(timeout=120)
        assert readiness is not None and readiness.status_code == 503, server.poll()
        assert server.wait(timeout=120) == 1
        output = server.stdout.read()
        assert "the pipeline stopped" in output and "ConnectionError" in output
    finally:
        if server and server.poll() is None:
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=30)
        private.down()
