"""The real `newskg` command in a subprocess, and the local servers of one data dir (`newskg services up`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from newskg.core.settings import Settings

REPO = Path(__file__).resolve().parents[2]


def newskg(
    *args: str, env: dict[str, str], check: bool = True, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run the real CLI in a subprocess, as a user would."""
    proc = subprocess.run(
        [sys.executable, "-m", "newskg", *args], env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"newskg {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def newskg_json(*args: str, env: dict[str, str]) -> Any:
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

    def up(self, *flags: str) -> dict[str, Any]:
        return newskg_json("services", "up", *flags, env=self.env)

    def down(self) -> None:
        newskg("services", "down", env=self.env, check=False)

    def status(self) -> dict[str, dict[str, Any]]:
        services = json.loads(newskg("services", "status", "--json", env=self.env, check=False).stdout)["services"]
        return {s["name"]: s for s in services}
