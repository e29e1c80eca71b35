"""One import package: the wheel installs `newskg` and nothing else at the top level (issue 31), the layers (core,
ingest, graph, extract, qa, evaluation) as its subpackages, each linked from the repository's top; `newskg` ships a
`py.typed` marker (PEP 561), so an installed newskg is type-checked by its users' checkers as it is here."""

import tomllib
from pathlib import Path

import setuptools

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("core", "ingest", "graph", "extract", "qa", "evaluation")


def _setuptools() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _wheel_packages() -> list[str]:
    """The packages setuptools puts in the wheel: pyproject's `packages.find` (namespaces on, its default)."""
    find = _setuptools()["packages"]["find"]
    assert find.get("namespaces", True), "the data folders are namespace packages: discovery must keep them"
    return setuptools.find_namespace_packages(where=str(ROOT), include=find["include"], exclude=find.get("exclude", ()))


def test_the_wheel_has_one_top_level_package():
    packages = _wheel_packages()
    assert {p.split(".")[0] for p in packages} == {"newskg"}, sorted({p.split(".")[0] for p in packages})
    assert {"newskg", *(f"newskg.{layer}" for layer in LAYERS)} <= set(packages)
    assert {"newskg.core.llm", "newskg.graph.store", "newskg.ingest.kafka", "newskg.evaluation.neon"} <= set(packages)


def test_each_layer_is_a_subpackage_linked_from_the_repository_s_top():
    for layer in LAYERS:
        folder, link = ROOT / "newskg" / layer, ROOT / layer
        assert folder.is_dir() and not folder.is_symlink(), f"newskg/{layer} is not a folder"
        assert link.is_symlink() and link.readlink() == Path("newskg", layer), f"{layer} is no link to newskg/{layer}"


def test_the_package_has_a_py_typed_marker():
    assert (ROOT / "newskg" / "py.typed").is_file()
    assert "py.typed" in _setuptools()["package-data"]["*"]
