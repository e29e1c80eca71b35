"""Imports run one way, down the flow: newskg → evaluation → qa → extract → {ingest, graph} → core.

Each module's imports are read with `ast` (nothing is imported), so a violation anywhere in a file counts,
also one inside a function or under TYPE_CHECKING.

The layers are newskg's subpackages (one import package, issue 31; the repository's top-level core/, … are links to
them), so `newskg.core.records` (newskg/core/records.py) is of layer core, and `newskg.cli.app` of layer newskg."""

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
# The layers' folders inside the package (newskg/<folder>), each linked from the repository's top
FOLDERS = ("core", "ingest", "graph", "extract", "qa", "evaluation")
# Every folder of the project's Python: the layers, the benches and the tests (none may import a folder unprefixed)
PROJECT_DIRS = ("newskg", "bench", "tests", "scripts")


def normalised(module: str) -> str:
    """A module name as the layers name it: `newskg.core.records` -> `core.records`."""
    parts = module.split(".")
    if parts[0] == "newskg" and len(parts) > 1 and parts[1] in FOLDERS:
        return ".".join(parts[1:])
    return module


def layer_of(module: str) -> str | None:
    """The layer a dotted module name belongs to (None: not ours, e.g. a library or the tests)."""
    module = normalised(module)
    for layer in LAYERS:
        if module == layer or module.startswith(layer + "."):
            return layer
    return None


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return normalised(".".join(parts[:-1] if parts[-1] == "__init__" else parts))


def imported_modules(path: Path) -> set[str]:
    """The absolute module names a file imports (relative imports resolved against its package)."""
    package = module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(normalised(alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = normalised(".".join([*base, *([node.module] if node.module else [])]))
            names.add(module)
            # `from newskg.core import llm` imports the layer core.llm (and importing qa from newskg, the layer qa)
            for alias in node.names:
                sub = normalised(f"{module}.{alias.name}")
                if sub in ALLOWED:
                    names.add(sub)
    return names


def through_a_link(path: Path) -> bool:
    """A file reached through a symlinked folder (core/… is newskg/core/…): it is walked at its own path."""
    return any((ROOT / parent).is_symlink() for parent in path.relative_to(ROOT).parents)


def python_files(folder: str) -> list[Path]:
    """The folder's .py files, each once: the links core/, … are not walked (whatever rglob does with them)."""
    return sorted(path for path in (ROOT / folder).rglob("*.py") if not through_a_link(path))


def project_files() -> list[Path]:
    return python_files("newskg")  # every layer's files: all are inside the one package


def top_level_imports(path: Path) -> set[str]:
    """The absolute (not relative) imports of a file that start with a layer folder: `core.settings`, not
    `newskg.core.settings`."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module)
    return {name for name in names if name.split(".")[0] in FOLDERS}


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
        "newskg.cli.app",
    } <= names
    assert not [path for path in project_files() if through_a_link(path)], "a layer file found through a link"
    assert len(names) == len(project_files())  # each file once


def test_the_package_root_imports_nothing():
    """Every layer import (`newskg.core.records`) runs newskg/__init__.py first: it must import nothing, or core
    would load what stands above it."""
    assert not [
        node
        for node in ast.walk(ast.parse((ROOT / "newskg" / "__init__.py").read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]


def test_imported_names_are_normalised_to_their_layer():
    assert layer_of("newskg.core.records") == "core" and layer_of("newskg.core.llm.client") == "core.llm"
    assert layer_of("newskg.cli.app") == "newskg" and layer_of("newskg.wiring") == "newskg"
    assert layer_of("newskg.evaluation.neon.run") == "evaluation" and layer_of("newskg.qa") == "qa"
    assert layer_of("tests.support.cli") is None and layer_of("fastapi") is None


def test_no_project_file_imports_a_layer_folder_as_a_top_level_package():
    """The wheel installs newskg alone: `from core.x import …` would find nothing installed (or another
    distribution's `core`), and a checkout would load a second copy of the module. Always `newskg.core.settings`."""
    found = [
        f"{path.relative_to(ROOT)} imports {name}"
        for folder in PROJECT_DIRS
        for path in python_files(folder)
        for name in sorted(top_level_imports(path))
    ]
    assert not found, "\n".join(found)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("from core.records import Chunk\n", {"core.records"}),
        ("import qa.api as api\n", {"qa.api"}),
        ("from evaluation import neon\n", {"evaluation"}),
        ("from newskg.core.records import Chunk\nimport newskg.qa.api as api\n", set()),
        ("from newskg import core\nfrom . import records\nfrom ..graph import store\nimport fastapi\n", set()),
    ],
)
def test_the_unprefixed_import_check_catches_them(tmp_path, source, expected):
    path = tmp_path / "module.py"
    path.write_text(source)
    assert top_level_imports(path) == expected


def test_no_module_imports_a_layer_above_it():
    problems = [problem for path in project_files() for problem in violations(path)]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "file", "expected"),
    [
        ("from newskg.extract.stage import ExtractStage\n", "core/timeaxes.py", ["imports extract.stage (extract)"]),
        ("import newskg.qa.api\n", "graph/store/reads.py", ["imports qa.api (qa)"]),
        ("from newskg.graph.store import Store\n", "ingest/kafka/stage.py", ["imports graph.store (graph)"]),
        (
            "from newskg.ingest.kafka.stage import Stage\n",
            "graph/store/reads.py",
            ["imports ingest.kafka.stage (ingest)"],
        ),
        (
            "from newskg.extract.prompts import m1_subject\n",
            "core/llm/client.py",
            ["imports extract.prompts (extract)"],
        ),
        ("from ..records import Chunk\n", "core/llm/cache.py", []),  # core.llm may import core
        ("from . import records\n", "evaluation/neoqa/run.py", []),
        ("from newskg.core import llm\n", "core/timeaxes.py", ["imports core.llm (core.llm)"]),
        ("from newskg.core.llm.client import LLMClient\n", "qa/answer.py", []),
        ("from newskg import qa\n", "graph/store/reads.py", ["imports newskg (newskg)", "imports qa (qa)"]),
        ("from newskg.wiring import Wiring\n", "evaluation/neoqa/run.py", ["imports newskg.wiring (newskg)"]),
        ("from newskg.cli import app\n", "qa/api.py", ["imports newskg.cli (newskg)"]),
        ("from newskg.qa.api import create_app\n", "newskg/cli/qa.py", []),
        ("from extract.stage import ExtractStage\n", "core/timeaxes.py", ["imports extract.stage (extract)"]),
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
