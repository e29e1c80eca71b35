"""Neo4j's own Cypher front-end over our statements: `scripts/cypher_lint.mjs` (npm @neo4j-cypher/language-support,
installed by `make setup` with `npm ci`) in one Node process for all of them.

No Neo4j server can run here; this is Neo4j 5's parser and semantic analysis (the compiler front-end a server
runs before planning), so a statement with no diagnostic is one Neo4j 5 accepts as Cypher. It does not plan or
execute: runtime behaviour on Neo4j (types of results, performance) is not covered."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tests.support.cli import REPO

SCRIPT = REPO / "scripts" / "cypher_lint.mjs"
PACKAGE = REPO / "node_modules" / "@neo4j-cypher" / "language-support"
CYPHER_5 = "CYPHER 5"  # Neo4j 5's language; Neo4j 2025+ defaults to it as well


class LinterMissing(RuntimeError):
    """Node or the npm package is not installed: a setup problem, never a reason to skip."""


@dataclass(frozen=True)
class Diagnostic:
    severity: int  # 1 error, 2 warning (LSP)
    message: str
    excerpt: str  # the part of the statement the diagnostic points at


@dataclass(frozen=True)
class ToLint:
    name: str
    query: str
    # The parameters the caller passes (a traced statement): then a `$x` it does not pass is a diagnostic too.
    # None (a statement of the static registry): undeclared-parameter diagnostics are dropped.
    parameters: Mapping[str, object] | None = None


def node_binary() -> str:
    node = shutil.which("node")
    if node is None:
        raise LinterMissing("node is not installed: Neo4j's Cypher linter runs under Node >= 20 (apt install nodejs)")
    if not PACKAGE.is_dir():
        raise LinterMissing(f"{PACKAGE.relative_to(REPO)} is missing: run `make setup` (it runs `npm ci`)")
    return node


def lint(
    statements: Sequence[ToLint],
    schema: Mapping[str, object] | None = None,
    version: str = CYPHER_5,
    timeout_s: float = 280,  # under pytest-timeout's 300 s: a clear error rather than a killed test
) -> dict[str, list[Diagnostic]]:
    """name → the diagnostics Neo4j's front-end reports for it (empty: accepted). `schema` may declare the graph's
    labels, relationshipTypes and propertyKeys, so a name the graph never had is reported (a typo)."""
    request = {
        "version": version,
        "schema": dict(schema or {}),
        "statements": [
            {
                "name": s.name,
                "query": s.query,
                "parameters": None if s.parameters is None else json.loads(json.dumps(s.parameters, default=str)),
            }
            for s in statements
        ],
    }
    done = subprocess.run(
        [node_binary(), str(SCRIPT)],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout_s,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cypher_lint.mjs failed ({done.returncode}): {done.stderr[-2000:]}")
    queries = {s.name: s.query for s in statements}
    return {
        result["name"]: [
            Diagnostic(d["severity"], d["message"], queries[result["name"]][d["start"] : d["end"] + 1])
            for d in result["diagnostics"]
        ]
        for result in json.loads(done.stdout)
    }


def failures(results: Mapping[str, list[Diagnostic]]) -> dict[str, list[str]]:
    """Only the statements with a diagnostic, as readable lines (for an assertion message)."""
    return {
        name: [f"{d.message} (at {d.excerpt!r})" for d in diagnostics]
        for name, diagnostics in results.items()
        if diagnostics
    }


def main() -> int:
    """`python -m tests.support.cypher_lint [--cypher 25]`: the registry through the front-end, from a shell."""
    import argparse

    from tests.support.cypher_registry import for_neo4j

    parser = argparse.ArgumentParser(description="Neo4j's Cypher front-end over every registered statement")
    parser.add_argument("--cypher", choices=("5", "25"), default="5", help="the Cypher language version")
    version = f"CYPHER {parser.parse_args().cypher}"
    registered = for_neo4j()
    found = failures(lint([ToLint(s.name, s.query) for s in registered], version=version))
    for name, messages in found.items():
        print(name, *messages, sep="\n  ")
    print(f"{version}: {len(registered) - len(found)}/{len(registered)} statements without a diagnostic")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
