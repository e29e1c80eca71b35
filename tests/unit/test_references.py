"""Docs, docstrings, comments and help text name only what exists: repository paths (`core/settings.py`), test
ids (`tests/unit/test_x.py::test_name`) and CLI commands (`newskg graph stats`), and nothing outside the
repository. README.md has its own test, so what it still lacks shows apart from the code's references."""

from __future__ import annotations

import re
import subprocess
from functools import cache
from pathlib import Path

import typer.main

ROOT = Path(__file__).resolve().parents[2]
SCANNED_SUFFIXES = {".py", ".md", ".toml", ".sh", ".yaml", ".cypher", ".html"}

# A repository path: its first folder is one of the repository's own, it ends in a file suffix, and it is not
# part of a URL, an absolute path or a longer path (nothing path-like right before it).
PATH = re.compile(r"(?<![\w./:~-])((?:[A-Za-z_][\w-]*/)+[\w.-]*\w\.(?:py|md|json|toml|sh|cypher|yaml|html|txt))\b")
TEST_ID = re.compile(r"(?<![\w./-])(tests/[\w/]+\.py)::(\w+)")
# `newskg CMD [SUB]` where a command is meant: in backticks or a code block (prose around it is not a command) ...
# `kubectl -n newskg get pods` names the namespace, not the command.
COMMAND = re.compile(r"(?:^|[`(]|(?<!-n)\s)(?:[\w./$()]*/)?newskg ([a-z][a-z-]*(?: [a-z][a-z-]*)?)")
# ... and in a shell script where newskg is what runs (not inside an echo's words).
SHELL_COMMAND = re.compile(r"(?:^\s*|[;&|(]\s*|/|python -m )newskg ([a-z][a-z-]*(?: [a-z][a-z-]*)?)", re.M)
SHELL_ALIAS = re.compile(r"^(\w+)=\S*/newskg$", re.M)  # NEWSKG=.venv/bin/newskg, then `$NEWSKG eval ...`
OUTSIDE = re.compile(r"\.\./shared|/work/(?:shared|main|wt)\b")
DOCUMENT = re.compile(r"(?<![\w./-])([A-Z][A-Za-z_-]*\.md)\b")  # a bare README.md, DESIGN.md: one of ours?


@cache
def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [
        f
        for f in out.splitlines()
        if (Path(f).suffix in SCANNED_SUFFIXES or Path(f).name == "Makefile") and (ROOT / f).is_file()
    ]


def texts(readme: bool) -> list[tuple[str, str]]:
    """(path, text) of the scanned files: README.md alone, or every other one. This file is skipped: it names
    stale references on purpose."""
    me = str(Path(__file__).relative_to(ROOT))
    chosen = [f for f in tracked_files() if (f == "README.md") == readme and f != me]
    return [(f, (ROOT / f).read_text(encoding="utf-8")) for f in chosen]


@cache
def top_folders() -> frozenset[str]:
    return frozenset(f.split("/", 1)[0] for f in tracked_files() if "/" in f)


def missing_paths(path: str, text: str) -> list[str]:
    found = []
    for match in PATH.finditer(text):
        target = match.group(1)
        if target.split("/", 1)[0] in top_folders() and not (ROOT / target).exists():
            found.append(f"{path}: {target}")
    return found


def missing_test_ids(path: str, text: str) -> list[str]:
    found = []
    for match in TEST_ID.finditer(text):
        file, name = match.groups()
        source = ROOT / file
        if not source.exists() or not re.search(rf"^\s*(?:def|class) {name}\b", source.read_text(), re.M):
            found.append(f"{path}: {file}::{name}")
    return found


@cache
def command_tree() -> dict[str, set[str] | None]:
    """Each top-level command: the names of its subcommands, or None for a plain command."""
    from newskg.cli.app import app

    root = typer.main.get_command(app)
    tree: dict[str, set[str] | None] = {}
    for name, command in root.commands.items():  # pyright: ignore[reportAttributeAccessIssue] - a click Group
        subcommands = getattr(command, "commands", None)
        tree[name] = set(subcommands) if subcommands is not None else None
    return tree


def command_spans(path: str, text: str) -> list[tuple[str, re.Pattern[str]]]:
    """The parts of a file where `newskg ...` is a command, with the pattern that finds it there: backtick spans
    and fenced code blocks in Markdown, backtick spans in Python (docstrings, help text), shell scripts and the
    Makefile as a whole (with `$NEWSKG`-style aliases of the command resolved)."""
    if path.endswith((".sh", "Makefile", ".yaml")):
        for alias in SHELL_ALIAS.findall(text):
            text = re.sub(rf"\$\{{?{alias}\}}?(?=\s)", "/newskg", text)
        return [(text, SHELL_COMMAND)]
    spans = re.findall(r"`([^`\n]+)`", text)
    if path.endswith(".md"):
        spans += re.findall(r"^```[^\n]*\n(.*?)^```", text, re.M | re.S)
    return [(span, COMMAND) for span in spans]


def group_spans(path: str, text: str) -> list[str]:
    """`graph reconcile`-style backtick spans, the `newskg` left out: a command group, then a word."""
    groups = "|".join(name for name, subcommands in command_tree().items() if subcommands is not None)
    pattern = re.compile(rf"`((?:{groups}) [a-z][a-z-]*)")
    return [] if path.endswith((".sh", "Makefile", ".yaml")) else pattern.findall(text)


def unknown_commands(path: str, text: str) -> list[str]:
    tree, found = command_tree(), []
    invocations = [m.group(1) for span, pattern in command_spans(path, text) for m in pattern.finditer(span)]
    for invocation in invocations + group_spans(path, text):
        words = invocation.split()
        command = words[0]
        if command not in tree:
            found.append(f"{path}: newskg {command}")
            continue
        subcommands = tree[command]
        if subcommands is not None and len(words) > 1 and words[1] not in subcommands:
            found.append(f"{path}: newskg {' '.join(words)}")
    return found


def outside_references(path: str, text: str) -> list[str]:
    """Paths outside the repository, and documents named bare that the repository does not have (notes that
    live beside it, not in it)."""
    ours = {Path(f).name for f in tracked_files()}
    outside = [m.group(0) for m in OUTSIDE.finditer(text)]
    outside += [m.group(1) for m in DOCUMENT.finditer(text) if m.group(1) not in ours]
    return [f"{path}: {name}" for name in outside]


def problems(readme: bool) -> list[str]:
    found: list[str] = []
    for path, text in texts(readme):
        found += missing_paths(path, text) + missing_test_ids(path, text)
        found += unknown_commands(path, text) + outside_references(path, text)
    return sorted(set(found))


def test_the_checks_see_what_they_should():
    """The patterns find stale references and leave alone what is not one (URLs, other packages' files,
    paths under a data dir, prose)."""
    text = (
        "see extract/openie/m1.py and `tests/integration/test_llm_extract.py`; core/settings.py is fine; "
        "https://x.example/core/gone.py, fanoutqa/data/dev.json, reports/neoqa/report.json and /tmp/core/x.py "
        "are not repository paths."
    )
    assert missing_paths("x.md", text) == ["x.md: extract/openie/m1.py", "x.md: tests/integration/test_llm_extract.py"]
    ids = "tests/unit/test_references.py::test_the_checks_see_what_they_should and tests/unit/test_references.py::nope"
    assert missing_test_ids("x.md", ids) == ["x.md: tests/unit/test_references.py::nope"]
    doc = "Run `newskg graph stats`, `newskg graph reset` or `newskg eval spike`; newskg is the project; `run nope`."
    assert unknown_commands("x.py", doc) == [
        "x.py: newskg graph reset",
        "x.py: newskg eval spike",
        "x.py: newskg run nope",
    ]
    script = (
        'N=.venv/bin/newskg\n$N eval spike\n$BIN/newskg services up\necho "newskg says hi"\npython -m newskg nope\n'
    )
    assert unknown_commands("x.sh", script) == ["x.sh: newskg eval spike", "x.sh: newskg nope"]
    assert outside_references("x.py", '"""From ../shared/papers/neon.md (INFRA.md, README.md)."""') == [
        "x.py: ../shared",
        "x.py: INFRA.md",
    ]


def test_code_docs_and_help_name_only_what_exists():
    assert problems(readme=False) == []


def test_the_readme_names_only_what_exists():
    assert problems(readme=True) == []
