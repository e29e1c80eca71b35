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


# How long an empty command line may last: a process in the middle of exec (just spawned) or of exiting (just
# killed) shows none for a moment, longer on a loaded machine.
EMPTY_CMDLINE_WAIT_S = 2.0


def is_alive(pid: int | None, marker: str) -> bool:
    """True when pid runs and its command line still contains marker (a reused pid does not count).

    An empty command line is read again until it shows (or the process is gone): read as "not ours", a server
    spawned a moment ago was taken for one that died at start (`services up` failed in 0.02 s, and left it
    running, unrecorded, holding its data dir; seen with noida-db under a reconnecting client's load, #18)."""
    if not pid:
        return False
    deadline = time.monotonic() + EMPTY_CMDLINE_WAIT_S
    while (seen := read_process(pid)) is not None:
        cmdline, state = seen
        if state == "Z":
            return False
        if cmdline or time.monotonic() >= deadline:
            return marker in cmdline
        time.sleep(0.02)
    return False


def read_process(pid: int) -> tuple[str, str] | None:
    """(command line, state letter) of pid from /proc, or None when there is no such process."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return None
    return cmdline.strip(), state


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
