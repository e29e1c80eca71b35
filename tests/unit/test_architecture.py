"""Imports run one way, down the flow: newskg → evaluation → qa → extract → {ingest, graph} → core.

Each module's imports are read with `ast` (nothing is imported), so a violation anywhere in a file counts,
also one inside a function or under TYPE_CHECKING."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# What each layer may import of the project (itself always). `core.llm` is a layer of its own inside core: the
# LLM client shared by extract, qa and evaluation, standing on core alone.
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "core.llm": {"core"},
    "ingest": {"core"},
    "graph": {"core"},
    "extract": {"core", "core.llm", "ingest", "graph"},
    "qa": {"core", "core.llm", "ingest", "graph", "extract"},
    "evaluation": {"core", "core.llm", "ingest", "graph", "extract", "qa"},
    "newskg": {"core", "core.llm", "ingest", "graph", "extract", "qa", "evaluation"},
}
LAYERS = sorted(ALLOWED, key=len, reverse=True)  # "core.llm" before "core"


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to (None: not ours, e.g. a library or the tests)."""
    for layer in LAYERS:
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path) -> set[str]:
    """The absolute module names a file imports (relative imports resolved against its package)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join([*base, *([node.module] if node.module else [])])
            names.add(module)
            # `from core import llm` imports the layer core.llm, not just core
            names.update(f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in ALLOWED)
    return names


def project_files() -> list[Path]:
    return sorted(path for layer in ALLOWED if "." not in layer for path in (ROOT / layer).rglob("*.py"))


def violations(path: Path) -> list[str]:
    own = layer_of(module_name(path))
    found = []
    for name in sorted(imported_modules(path)):
        target = layer_of(name)
        if target is not None and target != own and target not in ALLOWED[own]:
            found.append(f"{module_name(path)} ({own}) imports {name} ({target})")
    return found


def test_the_project_files_are_found():
    names = {module_name(path) for path in project_files()}
    assert {
        "core.records",
        "core.llm.client",
        "ingest.kafka.stage",
        "graph.store.reads",
        "extract.stage",
        "qa.api",
        "evaluation.neoqa.records",
        "newskg.wiring",
    } <= names


def test_no_module_imports_a_layer_above_it():
    problems = [problem for path in project_files() for problem in violations(path)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "file", "expected"),
    [
        ("from extract.stage import ExtractStage\n", "core/timeaxes.py", ["imports extract.stage (extract)"]),
        ("import qa.api\n", "graph/store/reads.py", ["imports qa.api (qa)"]),
        ("from graph.store import Store\n", "ingest/kafka/stage.py", ["imports graph.store (graph)"]),
        ("from ingest.kafka.stage import Stage\n", "graph/store/reads.py", ["imports ingest.kafka.stage (ingest)"]),
        ("from extract.prompts import m1_subject\n", "core/llm/client.py", ["imports extract.prompts (extract)"]),
        ("from ..records import Chunk\n", "core/llm/cache.py", []),  # core.llm may import core
        ("from . import records\n", "evaluation/neoqa/run.py", []),
        ("from core import llm\n", "core/timeaxes.py", ["imports core.llm (core.llm)"]),
        ("from core.llm.client import LLMClient\n", "qa/answer.py", []),
    ],
)
def test_the_check_catches_an_upward_import(tmp_path, monkeypatch, source, file, expected):
    """The check itself, on files written for the test: an upward or sideways import is reported, a downward
    or relative one within the layer is not."""
    path = tmp_path / file
    path.parent.mkdir(parents=True)
    path.write_text(source)
    monkeypatch.setitem(globals(), "ROOT", tmp_path)
    found = violations(path)
    assert [problem.split(") ", 1)[1] for problem in found] == expected
