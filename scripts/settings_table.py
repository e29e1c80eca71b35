"""The README's configuration table from the Settings model (so the two never drift apart).

`python scripts/settings_table.py` prints it; `--write` replaces the table in README.md."""

import sys
from pathlib import Path

from core.settings import Settings

HEADER = "| variable | default | meaning |"


def table() -> list[str]:
    lines = [HEADER, "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        default = field.default if field.default is not None else ""
        default = f"`{default}`" if default != "" else "(empty)"
        lines.append(f"| `NEWSKG_{name.upper()}` | {default} | {field.description or ''} |")
    return lines


def write(readme: Path) -> None:
    lines = readme.read_text().splitlines()
    start = lines.index(HEADER)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    readme.write_text("\n".join(lines[:start] + table() + lines[end:]) + "\n")


if __name__ == "__main__":
    if "--write" in sys.argv:
        write(Path(__file__).resolve().parents[1] / "README.md")
    else:
        print("\n".join(table()))
