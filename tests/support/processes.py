"""Subprocesses of the real CLI that tests watch, kill and wait for."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

from tests.support.cli import REPO


def serve_process(env: dict[str, str], port: int, *flags: str) -> subprocess.Popen[str]:
    """`newskg serve --port PORT [FLAGS]` in its own session (stop it with os.killpg), output on stdout."""
    return subprocess.Popen(
        [sys.executable, "-m", "newskg", "serve", *flags, "--port", str(port)],
        env=env,
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )


class StageProcess:
    """A `newskg ...` subprocess whose output lines the test can wait for."""

    def __init__(self, args: list[str], env: dict[str, str]):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "newskg", *args],
            env=env,
            cwd=REPO,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_until(self, predicate: Callable[[], object], timeout_s: float = 180, what: str = "") -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return
            if self.proc.poll() is not None:
                raise AssertionError(f"stage exited ({self.proc.returncode}) before {what}:\n{self.output()[-3000:]}")
            time.sleep(0.05)
        self.kill()  # a failed test leaves no stage running
        raise AssertionError(f"timed out waiting for {what}:\n{self.output()[-3000:]}")

    def saw(self, needle: str) -> bool:
        return any(needle in line for line in list(self.lines))

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self, timeout_s: float = 60) -> int:
        """A clean stop (SIGTERM: finish the batch, commit); the exit code."""
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout_s)

    def output(self) -> str:
        return "".join(self.lines)


def wait_for(predicate: Callable[[], object], timeout_s: float, server: subprocess.Popen[Any]) -> None:
    """Poll `predicate` (HTTP errors count as not yet) until true; fail at once if `server` exits."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.poll() is not None:
            output = server.stdout.read() if server.stdout else ""
            raise AssertionError(f"server exited: {output}")
        try:
            if predicate():
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise AssertionError("timed out waiting")


def wait_while_stages_run(predicate: Callable[[], object], timeout_s: float, what: str, watched: list[StageProcess]):
    """Poll `predicate` until true; fail at once, with its output, if a watched stage exits first."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        for stage in watched:
            if stage.proc.poll() is not None:
                raise AssertionError(
                    f"a stage exited ({stage.proc.returncode}) before {what}:\n{stage.output()[-3000:]}"
                )
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}:\n" + "\n---\n".join(s.output()[-2000:] for s in watched))


def evidence(base: str, date: str) -> list[dict[str, Any]]:
    """The evidence `/v1/ask` returns for Doja Cat as of `date` (hybrid), or none while the server is not ready."""
    response = httpx.get(base + "/v1/ask", params={"q": "Doja Cat", "date": date, "strategy": "hybrid"}, timeout=30)
    return response.json()["evidence"] if response.status_code == 200 else []
