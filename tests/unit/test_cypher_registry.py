"""The registry of every Cypher statement (tests/support/cypher_registry.py) is complete, and the Neo4j DDL is
Neo4j 5 syntax, idempotent, and keeps every MERGE key unique. Pure: no server, no Node (Neo4j's front-end runs
over the registry in tests/integration/test_neo4j_dialect.py)."""

from __future__ import annotations

import importlib
import os
import re

from newskg.graph.store.factbounds import BOUND_ALL_FACTS
from newskg.graph.store.factdays import COUNT_ALL_ENTITY_FACTS
from newskg.graph.store.schema import (
    ABOUT_BACKFILL,
    DAY_KEYS_BACKFILL,
    ENTITY_LOWER_BACKFILL,
    FULLTEXT_INDEXES,
    MERGE_KEYS,
    NAMES_STAMP_BACKFILL,
    RANGE_INDEXES,
    REL_RANGE_INDEXES,
    ddl_script,
    fact_days_backfill,
    falkordb_constraint_commands,
    falkordb_ddl,
    neo4j_ddl,
    one_line,
)
from tests.support.cli import REPO, newskg
from tests.support.cypher_registry import (
    CYPHER_MODULES,
    CYPHER_USERS,
    FRAGMENTS,
    cypher_constants,
    is_cypher,
    statements,
)

PROJECT_DIRS = ("newskg", "bench")  # every layer is inside newskg (the top-level core/, … are links to it)
CYPHER_TEXT = re.compile(r"\b(MATCH|MERGE|UNWIND|DETACH DELETE|CREATE INDEX|CREATE CONSTRAINT)\b")


def module_path(module: str) -> str:
    """The repository file of a module: `newskg.graph.store.reads` is newskg/graph/store/reads.py, `bench.qa`
    bench/qa.py."""
    return module.replace(".", "/") + ".py"


def test_every_project_file_with_cypher_is_covered_by_the_registry():
    """A new module with Cypher must be added to CYPHER_MODULES (or, if it only sends theirs, CYPHER_USERS)."""
    with_cypher = {
        str(path.relative_to(REPO))
        for folder in PROJECT_DIRS
        for path in (REPO / folder).rglob("*.py")
        if CYPHER_TEXT.search(path.read_text(encoding="utf-8"))
    }
    covered = {module_path(m) for m in CYPHER_MODULES} | set(CYPHER_USERS)
    assert with_cypher <= covered, sorted(with_cypher - covered)
    assert covered <= with_cypher, f"listed but holding no Cypher: {sorted(covered - with_cypher)}"


def test_every_cypher_constant_is_a_registered_statement_or_a_declared_fragment():
    registered = {s.name for s in statements()}
    for module_name in CYPHER_MODULES:
        for name, text in cypher_constants(importlib.import_module(module_name)):
            base = name.split("[")[0]
            if base in FRAGMENTS:
                assert not is_cypher(text) or base == "newskg.graph.store.reads.IDS_PAGE", (
                    f"{name} is a whole statement"
                )
                continue
            assert name in registered or base.startswith("newskg.graph.store.reads.EXPORT_"), name


def test_the_registry_holds_the_statements_of_every_kind():
    names = {s.name for s in statements()}
    assert {
        "newskg.graph.store.writes.ENTITIES",
        "newskg.graph.store.m2.M2_GAVE_UP",
        "newskg.graph.store.mentions.RECOUNT_ENTITY_DAYS",
        "newskg.graph.store.reads.TIMELINE",
        "newskg.graph.store.reads.COUNTS['chunks']",
        "newskg.graph.store.reads.ids_page('Chunk')",
        "newskg.graph.store.reads.export_rel_query('COVERS', True)",
        "newskg.graph.connection.base.DELETE_ALL",
        "newskg.graph.store.questions.PARTNERS_MANY",
        "newskg.graph.store.questions.HUB_CANDIDATES",
        "bench.qa.SCAN",
        "bench.replay.ALL_FACTS",
        "graph/browser/queries.cypher:find_entity",
        "newskg.graph.store.schema.neo4j_ddl()[0]",
    } <= names
    assert all(";" not in s.query for s in statements()), "one statement per entry (a ';' would make two)"


def merged_keys() -> set[tuple[str, str]]:
    """(label, property) of every `MERGE (x:Label {property: …})` the project sends."""
    found: set[tuple[str, str]] = set()
    for s in statements():
        found.update(re.findall(r"MERGE \(\w+:(\w+) \{(\w+):", s.query))
    return found


def test_every_merge_key_is_unique_on_neo4j_and_indexed_and_unique_on_falkordb():
    """A MERGE without a uniqueness constraint scans the label and, with two writers, can create the node twice."""
    assert merged_keys() == set(MERGE_KEYS)
    neo4j, falkordb = neo4j_ddl(), falkordb_ddl()
    commands = falkordb_constraint_commands("g")
    for label, key in MERGE_KEYS:
        assert (
            f"CREATE CONSTRAINT {label.lower()}_{key} IF NOT EXISTS FOR (n:{label}) REQUIRE n.{key} IS UNIQUE" in neo4j
        )
        assert f"CREATE INDEX FOR (n:{label}) ON (n.{key})" in falkordb
        assert ("GRAPH.CONSTRAINT", "CREATE", "g", "UNIQUE", "NODE", label, "PROPERTIES", "1", key) in commands


def test_the_neo4j_ddl_is_neo4j_5_syntax_and_idempotent():
    ddl = neo4j_ddl()
    assert all(re.fullmatch(r"CREATE (CONSTRAINT|RANGE INDEX|FULLTEXT INDEX) \w+ IF NOT EXISTS FOR .+", s) for s in ddl)
    assert len({s.split()[2] if s.startswith("CREATE CONSTRAINT") else s.split()[3] for s in ddl}) == len(ddl)
    for label, prop in RANGE_INDEXES:
        assert f"CREATE RANGE INDEX {label.lower()}_{prop} IF NOT EXISTS FOR (n:{label}) ON (n.{prop})" in ddl
    for rel, prop in REL_RANGE_INDEXES:
        assert f"CREATE RANGE INDEX {rel.lower()}_{prop} IF NOT EXISTS FOR ()-[r:{rel}]-() ON (r.{prop})" in ddl
    assert "CREATE FULLTEXT INDEX entity_names IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.description]" in ddl
    assert len([s for s in ddl if "FULLTEXT" in s]) == len(FULLTEXT_INDEXES)
    # FalkorDB's side: the shared index syntax only (no IF NOT EXISTS, no constraints, no full-text) in Cypher
    node, rel = r"CREATE INDEX FOR \(n:\w+\) ON \(n\.\w+\)", r"CREATE INDEX FOR \(\)-\[r:\w+\]-\(\) ON \(r\.\w+\)"
    assert all(re.fullmatch(node, s) or re.fullmatch(rel, s) for s in falkordb_ddl())
    assert "CREATE INDEX FOR ()-[r:ABOUT]-() ON (r.key)" in falkordb_ddl()


def test_graph_init_prints_the_ddl_of_the_dialect_asked_without_a_server():
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")}
    env["NEWSKG_GRAPH_URI"] = "bolt://127.0.0.1:1"  # nothing listens: printing must not connect
    env["PYTHONPATH"] = str(REPO)
    out = newskg("graph", "init", "--print-ddl", "--dialect", "neo4j", env=env).stdout
    derived = (*DAY_KEYS_BACKFILL, *ABOUT_BACKFILL, *ENTITY_LOWER_BACKFILL, *NAMES_STAMP_BACKFILL)
    counted = (*COUNT_ALL_ENTITY_FACTS, BOUND_ALL_FACTS)
    backfills = [one_line(s) for s in (*derived, *fact_days_backfill("neo4j"), *counted)]
    assert out == ddl_script("neo4j") and out.splitlines() == [f"{s};" for s in (*backfills, *neo4j_ddl())]
    assert newskg("graph", "init", "--print-ddl", env=env).stdout == out, "the default: the configured URI's dialect"
    falkor = newskg("graph", "init", "--print-ddl", "--dialect", "falkordb", env=env).stdout
    falkor_backfills = (*derived, *fact_days_backfill("falkordb"), *counted)
    statements = [*(one_line(s) for s in falkor_backfills), *falkordb_ddl()]
    assert falkor.splitlines()[: len(statements)] == [f"{s};" for s in statements]
    assert "// redis-cli GRAPH.CONSTRAINT CREATE newskg UNIQUE NODE M2Pair PROPERTIES 1 pair" in falkor
    wrong = newskg("graph", "init", "--print-ddl", "--dialect", "cypher", env=env, check=False)
    assert wrong.returncode == 2 and "use neo4j or falkordb" in wrong.stderr
