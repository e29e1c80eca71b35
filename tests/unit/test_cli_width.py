"""A CLI error is one line whatever the terminal's width: rich prints the error and notice lines of
newskg/cli/output.py unwrapped (soft wrap), so a script, a test or a person grepping for the message finds it whole
in a 40-column terminal as in a pipe."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from tests.support.cli import REPO

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
COLUMNS = 40


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")}
    env |= {"NEWSKG_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(REPO), "COLUMNS": str(COLUMNS)}
    env.pop("TERMINAL_WIDTH", None)
    return env


def _bad_gold(tmp_path: Path) -> Path:
    """A gold file whose one mention ends a character early: `newskg eval entities` refuses it (exit 2)."""
    mention = {"start": 0, "end": 9, "text": "Jared Leto", "type": "PERSON", "canonical": "Jared Leto"}
    doc = {"id": "d", "source": "test", "text": "Jared Leto met Karl.", "mentions": [mention]}
    # a long path, as CI's temp folders are: the line is several times the terminal's width
    folder = tmp_path / ("a-folder-with-a-long-name-" * 3)
    folder.mkdir()
    path = folder / "gold.jsonl"
    path.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    return path


def _in_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    """Run the command with its stderr on a pseudo-terminal COLUMNS wide (rich then takes the terminal's width);
    its exit code and what the terminal received, colour codes removed."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    try:
        proc = subprocess.run(args, env=env, cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=follower, timeout=120)  # fmt: skip
    finally:
        os.close(follower)
    received = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the terminal is closed and drained
            break
        if not chunk:
            break
        received += chunk
    os.close(leader)
    return proc.returncode, ANSI.sub("", received.decode("utf-8", "replace")).replace("\r\n", "\n")


@pytest.mark.parametrize("terminal", [False, True], ids=["pipe", "terminal"])
def test_an_error_stays_one_line_at_40_columns(tmp_path, terminal):
    gold = _bad_gold(tmp_path)
    args = [sys.executable, "-m", "newskg", "eval", "entities", "--gold", str(gold)]
    if terminal:
        code, said = _in_a_terminal(args, _env(tmp_path))
    else:
        proc = subprocess.run(args, env=_env(tmp_path), cwd=REPO, capture_output=True, text=True, timeout=120)
        code, said = proc.returncode, proc.stderr
    expected = f"error: {gold}: 1 problem(s): d [0:9] 'Jared Leto': the text there is 'Jared Let'"
    assert len(expected) > 3 * COLUMNS
    assert code == 2 and expected in said.splitlines(), said
