"""Docs, docstrings, comments and help text name only what exists: repository paths (`core/settings.py`), test
ids (`tests/unit/test_x.py::test_name`) and CLI commands (`newskg graph stats`), and nothing outside the
repository. README.md and the docs site (docs/, its generated pages included) have their own tests, so what they
still lack shows apart from the code's references; the site must also document every setting, name the tests of
every guarantee and the command of every benchmark figure, and keep every page in its navigation."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from functools import cache
from pathlib import Path
from types import ModuleType

import typer.main
import yaml

from bench.results import BENCHES
from newskg.core.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
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
# On the docs site a test is named by its full path: `unit/test_x.py` or a bare `::test_name` would go unchecked.
SHORT_TEST = re.compile(r"(?<![\w./-])(?:unit|integration|chaos)/test_\w+\.py|`::\w+")
SETTING = re.compile(r"\bNEWSKG_[A-Z0-9_]*[A-Z0-9]\b")
BENCH_MODULE = re.compile(r"\bbench\.([a-z_]+)\b")
# `qa.answer.best_sentences`: a dotted name in backticks, from a layer (named inside newskg/) or newskg itself.
CODE_NAME = re.compile(r"`((?:core|graph|qa|ingest|extract|evaluation|newskg)(?:\.[A-Za-z_]\w*)+)(?:\(\))?`")
SCRIPTS = {bench.name: bench.script for bench in BENCHES}  # a results section's bench → its bench/ script
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
    """(path, text) of the scanned files: README.md alone, or every other one but the docs site's pages. This file
    is skipped: it names stale references on purpose."""
    me = str(Path(__file__).relative_to(ROOT))
    chosen = [f for f in tracked_files() if (f == "README.md") == readme and f != me and not f.startswith("docs/")]
    return [(f, (ROOT / f).read_text(encoding="utf-8")) for f in chosen]


@cache
def docs_gen() -> ModuleType:
    """scripts/docs_gen.py, the generator of the site's generated pages (a script, not a package module)."""
    spec = importlib.util.spec_from_file_location("docs_gen", ROOT / "scripts" / "docs_gen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@cache
def generated_pages() -> dict[str, str]:
    """The generated pages as the site build makes them: docs path (under docs/) -> text."""
    return docs_gen().pages()


@cache
def docs_pages() -> tuple[tuple[str, str], ...]:
    """(path, text) of every page of the docs site: the written ones under docs/ and the generated ones, each
    named by its place in docs/ (tracked or not: a page is checked before it is committed)."""
    written = [(str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(DOCS.rglob("*.md"))]
    made = [(f"docs/{path}", text) for path, text in generated_pages().items() if path.endswith(".md")]
    return tuple(written + made)


def page(path: str) -> str:
    return dict(docs_pages())[f"docs/{path}"]


@cache
def top_folders() -> frozenset[str]:
    """The repository's top-level folders, the links to newskg's layers among them (core/ … → newskg/core …)."""
    links = {p.name for p in ROOT.iterdir() if p.is_symlink() and (ROOT / "newskg" / p.name).is_dir()}
    return frozenset(f.split("/", 1)[0] for f in tracked_files() if "/" in f) | {"docs"} | links


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


def short_test_references(path: str, text: str) -> list[str]:
    return [f"{path}: {m.group(0)} (name the test by its full path, tests/...)" for m in SHORT_TEST.finditer(text)]


def missing_bench_modules(path: str, text: str) -> list[str]:
    """`python -m bench.NAME` and `bench.NAME` name a bench script that exists."""
    return [
        f"{path}: bench.{name}" for name in BENCH_MODULE.findall(text) if not (ROOT / "bench" / f"{name}.py").exists()
    ]


def resolves(dotted: str) -> bool:
    """`qa.answer.best_sentences` is newskg.qa.answer's best_sentences: modules as deep as they go, then
    attributes."""
    parts = dotted.split(".")
    parts = parts if parts[0] == "newskg" else ["newskg", *parts]
    found: object = importlib.import_module("newskg")
    for depth, name in enumerate(parts[1:], start=2):
        if not hasattr(found, name) and isinstance(found, ModuleType) and hasattr(found, "__path__"):
            found = importlib.import_module(".".join(parts[:depth])) if _is_module(parts[:depth]) else None
        else:
            found = getattr(found, name, None)
        if found is None:
            return False
    return True


def _is_module(parts: list[str]) -> bool:
    return importlib.util.find_spec(".".join(parts)) is not None


def missing_code_names(path: str, text: str) -> list[str]:
    """A dotted name of the package in backticks (`qa.fusion.rrf`) is a module, class or function that exists."""
    return [f"{path}: {name}" for name in CODE_NAME.findall(text) if not resolves(name)]


def problems(readme: bool | None = None, files: tuple[tuple[str, str], ...] | None = None) -> list[str]:
    """What the files name that does not exist: README.md (readme=True), every other scanned file (readme=False),
    or the files given."""
    found: list[str] = []
    for path, text in files if files is not None else texts(bool(readme)):
        found += missing_paths(path, text) + missing_test_ids(path, text)
        found += unknown_commands(path, text) + outside_references(path, text) + missing_code_names(path, text)
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
    docs = "`unit/test_a.py::b`, `::c`, `tests/unit/test_a.py::b` and `python -m bench.nope` after bench.results"
    assert [line.split(" (")[0] for line in short_test_references("x.md", docs)] == [
        "x.md: unit/test_a.py",
        "x.md: `::c",
    ]
    assert missing_bench_modules("x.md", docs) == ["x.md: bench.nope"]
    names = "`qa.fusion.rrf`, `newskg.wiring.Wiring.llm`, `qa.nope`, `newskg.pipeline.llm_client`; graph.x is prose"
    assert missing_code_names("x.py", names) == ["x.py: qa.nope", "x.py: newskg.pipeline.llm_client"]
    table = "| figure | command |\n|---|---|\n| `a` | `python -m bench.qa` |\n| `b\\|c` | same |\n"
    assert _tables(table) == [[["figure", "command"], ["`a`", "`python -m bench.qa`"], ["`b\\|c`", "same"]]]


def test_code_docs_and_help_name_only_what_exists():
    assert problems(readme=False) == []


def test_the_readme_names_only_what_exists():
    assert problems(readme=True) == []


def test_the_docs_site_names_only_what_exists():
    """Written and generated pages alike: paths, test ids (in full), `newskg` commands and bench scripts."""
    pages = docs_pages()
    found = problems(files=pages)
    for path, text in pages:
        found += short_test_references(path, text) + missing_bench_modules(path, text)
    assert found == []


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    """mkdocs.yml's nav against docs/ and the generated pages (the strict build checks it too; this runs without
    building), and no written page shadows a generated one."""

    def entries(nav: object) -> list[str]:
        if isinstance(nav, str):
            return [nav]
        if isinstance(nav, list):
            return [page for item in nav for page in entries(item)]
        if isinstance(nav, dict):
            return [page for value in nav.values() for page in entries(value)]
        return []

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = entries(config["nav"])
    written = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    made = {path for path in generated_pages() if path.endswith(".md")}
    assert not written & made, f"written copies of generated pages: {written & made}"
    assert len(nav) == len(set(nav)), "a page is in the nav twice"
    assert set(nav) == written | made, (set(nav) - (written | made), (written | made) - set(nav))
    assert config["strict"] is True and config["theme"]["font"] is False


def test_the_generated_pages_are_deterministic():
    """Two generations give the same bytes, and nothing in them depends on where the checkout is."""
    again = docs_gen().pages()
    assert again == generated_pages()
    assert not any(str(ROOT) in text for text in again.values())


def test_every_setting_is_documented_on_the_docs_site():
    """The generated configuration reference has a row for every setting with its type, default and the
    description the code gives; every NEWSKG_* variable a written page or the README names is a setting or an
    environment variable the repository's code or scripts read (a test or bench knob), not a stale name."""
    reference = page("operating/configuration.md")
    escape = docs_gen()._escape  # pyright: ignore[reportPrivateUsage]
    for name, field in Settings.model_fields.items():
        variable = f"NEWSKG_{name.upper()}"
        row = next((line for line in reference.splitlines() if line.startswith(f"| `{variable}` |")), None)
        assert row is not None, f"{variable} missing from the configuration reference"
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", row)[1:-1]]
        assert len(cells) == 5 and cells[1] and cells[2], row  # variable, type, default, limits, description
        assert field.description and cells[4] == escape(field.description, table=True), row
    settings = {f"NEWSKG_{name.upper()}" for name in Settings.model_fields}
    code = "\n".join(
        (ROOT / f).read_text(encoding="utf-8")
        for f in tracked_files()
        if f.endswith((".py", ".sh", ".yaml")) or f.endswith("Makefile")
    )
    named = [(path, text) for path, text in docs_pages()] + texts(readme=True)
    unknown = sorted(
        {f"{path}: {v}" for path, text in named for v in SETTING.findall(text) if v not in settings and v not in code}
    )
    assert unknown == []


def test_every_guarantee_names_the_tests_that_prove_it():
    """Each bullet of the guarantees page names at least one test (a test file or test id under tests/); that each
    exists is test_the_docs_site_names_only_what_exists's check."""
    text = page("guarantees.md")
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    assert len(sections) >= 9
    for section in sections:
        title = section.splitlines()[0]
        bullets = re.split(r"^- ", section, flags=re.M)[1:]
        assert bullets, f"guarantees: section {title!r} holds no guarantee"
        for bullet in bullets:
            assert re.search(r"tests/[\w/]+\.py", bullet), f"guarantees, {title!r}: no test named in {bullet[:120]!r}"


def _tables(text: str) -> list[list[list[str]]]:
    """Every Markdown table of a page: its rows (header first), each a list of cells."""
    tables: list[list[list[str]]] = []
    rows: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            cells = [cell.strip() for cell in re.split(r"(?<!\\)\|(?=(?:[^`]*`[^`]*`)*[^`]*$)", line)[1:-1]]
            if not all(re.fullmatch(r":?-+:?", cell) for cell in cells):
                rows.append(cells)
        elif rows:
            tables.append(rows)
            rows = []
    return tables


def test_every_benchmark_figure_names_its_command():
    """On the benchmarks pages, every row of a table with a command column names a `python -m bench.…` or `make …`
    command (or "same" for the row above's); on the generated results page, every figure sits in a bench's section
    headed by its command, and every figure of bench/RESULTS.md is there."""
    command = re.compile(r"`[^`]*(?:python -m bench\.[a-z_]+|make [a-z]+)[^`]*`")
    checked = 0
    for path, text in docs_pages():
        if not path.startswith("docs/benchmarks/"):
            continue
        for table in _tables(text):
            header = [cell.lower() for cell in table[0]]
            if "command" not in header:
                continue
            column = header.index("command")
            previous = None
            for row in table[1:]:
                cell = row[column] if column < len(row) else ""
                if cell == "same":
                    assert previous, f"{path}: 'same' with no command above: {row[0]}"
                    continue
                assert command.search(cell), f"{path}: the figure {row[0]!r} names no command"
                previous = cell
                checked += 1
    assert checked >= 20, checked  # the benchmarks page's tables were found

    results = page("benchmarks/results.md")
    sections = re.split(r"^## ", results, flags=re.M)[1:]
    figures_shown = set()
    for section in sections:
        name, _, body = section.partition("\n")
        first = next(line for line in body.splitlines() if line.strip())
        script = SCRIPTS.get(name.strip(), name.strip())  # qa_1m is bench/qa.py at another size
        assert re.match(rf"`python -m bench\.{re.escape(script)}\b[^`]*`", first), (name, first)
        figures_shown |= set(re.findall(r"^\| `(\w+)` \|", body, re.M))
    source = (ROOT / "bench" / "RESULTS.md").read_text(encoding="utf-8")
    figures = set(re.findall(r"^\| `(\w+)` \|", source, re.M))
    assert figures and figures == figures_shown
    head = results.split("\n## ", 1)[0]
    assert re.findall(r"^\| `(\w+)` \|", head, re.M) == []  # no figure outside a bench's section


def test_the_readme_is_short_and_opens_with_the_two_commands():
    """The door: at most 200 lines, the two commands in the first code block, before anything else is run; the
    docs pages and images it points at exist (paths: test_the_readme_names_only_what_exists)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    first_block = re.search(r"^```[^\n]*\n(.*?)^```", readme, re.M | re.S)
    assert first_block is not None
    commands = [line.split("#", 1)[0].strip() for line in first_block.group(1).splitlines()]
    assert [c for c in commands if c] == ["make demo", "make test"]
    assert readme.index("make demo") < readme.index("```", first_block.end())
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", readme):
        assert (ROOT / image).is_file(), image
    assert re.search(r"\(docs/[\w/-]+\.md\)", readme), "the README points into the docs site"
