"""Every top-level package ships a `py.typed` marker (PEP 561), so an installed newskg is type-checked by its
users' checkers as it is here."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _packages() -> list[str]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    return [pattern.rstrip("*") for pattern in setuptools["packages"]["find"]["include"]]


def test_every_top_level_package_has_a_py_typed_marker():
    packages = _packages()
    assert {"core", "graph", "ingest", "extract", "qa", "evaluation", "newskg"} <= set(packages)
    assert [p for p in packages if not (ROOT / p / "py.typed").is_file()] == []


def test_the_marker_is_package_data():
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "py.typed" in setuptools["package-data"]["*"]
