"""Start, find and stop detached server processes; free loopback ports."""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def free_port(preferred: int | None = None, below: int | None = None) -> int:
    """The preferred port when it is free (so addresses stay stable across restarts), else any free one,
    else (with `below`) a free one under that bound."""
    if preferred and below and preferred > below:
        preferred = None
    candidates = ([preferred] if preferred else []) + (random.sample(range(20000, below), 200) if below else [0])
    for candidate in candidates:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", candidate))
            except OSError:
                continue
            return sock.getsockname()[1]
    raise RuntimeError("no free loopback port")


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def spawn(cmd: list[str], log_path: Path, env: dict[str, str] | None = None, cwd: Path | None = None) -> int:
    """Start a process in its own session, so it outlives the CLI and a Ctrl-C of the CLI does not reach it."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
    return proc.pid


def is_alive(pid: int | None, marker: str) -> bool:
    """True when pid runs and its command line still contains marker (a reused pid does not count)."""
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z" and marker in cmdline


def terminate(pid: int, marker: str, grace_s: float = 15.0) -> None:
    """SIGTERM, then SIGKILL after the grace period; only if the pid is still the process we started."""
    if not is_alive(pid, marker):
        return
    _signal_group(pid, signal.SIGTERM)
    if wait_until(lambda: not is_alive(pid, marker), grace_s):
        return
    _signal_group(pid, signal.SIGKILL)
    wait_until(lambda: not is_alive(pid, marker), 5.0)


def kill_hard(pid: int, marker: str) -> None:
    """SIGKILL at once: for crash tests."""
    if is_alive(pid, marker):
        _signal_group(pid, signal.SIGKILL)
        wait_until(lambda: not is_alive(pid, marker), 5.0)


def stop_child(proc: subprocess.Popen[str] | subprocess.Popen[bytes], grace_s: float = 60.0) -> None:
    """SIGTERM a child we started, then SIGKILL it if it has not exited within `grace_s`; always reaped."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)


def _signal_group(pid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def wait_until(predicate: Callable[[], bool], timeout_s: float, interval_s: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval_s)
