"""The one JSON shape every bench prints with `--json`: named figures with their unit and, when one applies, the
baseline they compare to (ratio = value / baseline), the machine, the date and the command that made them."""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
from pathlib import Path
from typing import Any

Figure = dict[str, Any]


def figure(value: float, unit: str, baseline: float | None = None) -> Figure:
    ratio = round(value / baseline, 3) if baseline else None
    return {"value": value, "unit": unit, "baseline": baseline, "ratio": ratio}


def machine() -> str:
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def emit(figures: dict[str, Figure], command: str) -> None:
    """Print the figures as one JSON object on stdout."""
    date = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
    print(json.dumps({"figures": figures, "machine": machine(), "date": date, "command": command}))


def process_cpu_s(pid: int | None) -> float | None:
    """User + system CPU seconds a process has used so far (Linux /proc); None where it cannot be read."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
