"""Every Cypher statement newskg can send, gathered from where it is written (the static half of the Neo4j
dialect proof; the traced half records what a workload really sent: tests/support/recording.py).

Statements are module constants (and the few builders of graph/store/reads.py, expanded for every label and
relationship the store passes them), so the registry reads them from the modules themselves rather than keeping
a copy. `CYPHER_MODULES` lists every module that holds Cypher; tests/unit/test_cypher_registry.py fails when a
project file with Cypher is missing from it, or a Cypher-looking constant of a listed module is neither a
statement here nor a declared fragment."""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Literal

Scope = Literal["both", "neo4j", "falkordb"]

# Modules whose constants are Cypher (bench/graph.py writes through GraphStore and holds none).
CYPHER_MODULES = (
    "newskg.graph.connection.base",
    "newskg.graph.store.writes",
    "newskg.graph.store.m2",
    "newskg.graph.store.mentions",
    "newskg.graph.store.factdays",
    "newskg.graph.store.factbounds",
    "newskg.graph.store.journals",
    "newskg.graph.store.reads",
    "newskg.graph.store.explore",
    "newskg.graph.store.questions",
    "bench.qa",
    "bench.qa_graph",
    "bench.determinism",
    "bench.replay",
)
# Files with Cypher text that is not a module constant of CYPHER_MODULES: they send the constants of those
# modules, or hold the dialect layer and the Browser files (registered below by their own functions).
CYPHER_USERS = (
    "newskg/graph/store/writer.py",
    "newskg/graph/store/schema.py",
    "newskg/graph/connection/bolt.py",
)
# Parts of statements, not statements: each is registered inside the statements built from it.
FRAGMENTS = {
    "newskg.graph.store.reads.ENTITY_VISIBLE",
    "newskg.graph.store.explore.ENTITY_VISIBLE",  # the same fragment, imported from reads
    "newskg.graph.store.reads.ENTITY_ALIASES",
    "newskg.graph.store.explore.ENTITY_ALIASES",  # the same fragment, imported from reads
    "newskg.graph.store.reads.ENTITY_VISIBLE_BY_DAYS",
    "newskg.graph.store.explore.ENTITY_VISIBLE_BY_DAYS",  # the same fragment, imported from reads
    "newskg.graph.store.reads.IDS_PAGE",  # a template: ids_page(label) expands it
}

CLAUSE = re.compile(r"^\s*(OPTIONAL MATCH|MATCH|MERGE|UNWIND|CREATE|WITH|RETURN|CALL)\b")


@dataclass(frozen=True)
class Statement:
    name: str  # where it is defined: module.CONSTANT, or module.function(argument)
    query: str
    scope: Scope = "both"  # the engines it is written for: shared Cypher, or one dialect's DDL


def is_cypher(text: str) -> bool:
    """A complete statement: starts with a clause and ends in RETURN or an update (a fragment does neither)."""
    return bool(CLAUSE.match(text)) and bool(re.search(r"\b(RETURN|MERGE|SET|CREATE|DELETE)\b", text))


def cypher_constants(module: ModuleType) -> Iterator[tuple[str, str]]:
    """(module.NAME, text) of the module's public string constants and dict-of-string constants that start with a
    Cypher clause (fragments included: the caller tells them apart)."""
    for attr, value in vars(module).items():
        if attr.startswith("_") or attr.startswith("__"):
            continue
        if isinstance(value, str) and CLAUSE.match(value):
            yield f"{module.__name__}.{attr}", value
        elif isinstance(value, dict):
            for key, item in value.items():  # pyright: ignore[reportUnknownVariableType] (any dict constant)
                if isinstance(item, str) and CLAUSE.match(item):
                    yield f"{module.__name__}.{attr}[{key!r}]", item


def _constants() -> Iterator[Statement]:
    for module_name in CYPHER_MODULES:
        for name, text in cypher_constants(importlib.import_module(module_name)):
            if name.split("[")[0] not in FRAGMENTS and name.split("[")[0] not in _BUILT:
                yield Statement(name, text)


# Dict constants of reads.py that are parts of the export statements, expanded by their builders below.
_BUILT = {"newskg.graph.store.reads.EXPORT_NODE_AS_OF", "newskg.graph.store.reads.EXPORT_REL_AS_OF"}


def _built() -> Iterator[Statement]:
    """The statements reads.py builds per label or relationship, for every label and relationship the store and
    the export pass."""
    from newskg.graph.store import reads
    from newskg.graph.store.export import NODE_LABELS, RELATIONSHIPS
    from newskg.graph.store.reader import COUNTS_LABELS

    for label in COUNTS_LABELS:
        yield Statement(f"newskg.graph.store.reads.ids_page({label!r})", reads.ids_page(label))
    for label in NODE_LABELS:
        for as_of in (False, True):
            yield Statement(
                f"newskg.graph.store.reads.export_node_query({label!r}, {as_of})", reads.export_node_query(label, as_of)
            )
    for rel in RELATIONSHIPS:
        for as_of in (False, True):
            yield Statement(
                f"newskg.graph.store.reads.export_rel_query({rel!r}, {as_of})", reads.export_rel_query(rel, as_of)
            )


def _ddl() -> Iterator[Statement]:
    from newskg.graph.store.factdays import COUNT_ALL_ENTITY_FACTS
    from newskg.graph.store.schema import (
        ABOUT_BACKFILL,
        DAY_KEYS_BACKFILL,
        ENTITY_LOWER_BACKFILL,
        ENTITY_WITHOUT_FACTS,
        FALKORDB_CONSTRAINTS,
        FALKORDB_INDEXES,
        NAMES_STAMP_BACKFILL,
        NEO4J_INDEXES,
        falkordb_ddl,
        neo4j_ddl,
    )

    for i, query in enumerate(neo4j_ddl()):
        yield Statement(f"newskg.graph.store.schema.neo4j_ddl()[{i}]", query, "neo4j")
    for i, query in enumerate(falkordb_ddl()):
        yield Statement(f"newskg.graph.store.schema.falkordb_ddl()[{i}]", query, "falkordb")
    yield Statement("newskg.graph.store.schema.FALKORDB_CONSTRAINTS", FALKORDB_CONSTRAINTS, "falkordb")
    yield Statement("newskg.graph.store.schema.FALKORDB_INDEXES", FALKORDB_INDEXES, "falkordb")
    yield Statement("newskg.graph.store.schema.NEO4J_INDEXES", NEO4J_INDEXES, "neo4j")
    for i, query in enumerate(DAY_KEYS_BACKFILL):
        yield Statement(f"newskg.graph.store.schema.DAY_KEYS_BACKFILL[{i}]", query)
    for i, query in enumerate(ABOUT_BACKFILL):
        yield Statement(f"newskg.graph.store.schema.ABOUT_BACKFILL[{i}]", query)
    for i, query in enumerate(ENTITY_LOWER_BACKFILL):
        yield Statement(f"newskg.graph.store.schema.ENTITY_LOWER_BACKFILL[{i}]", query)
    for i, query in enumerate(NAMES_STAMP_BACKFILL):
        yield Statement(f"newskg.graph.store.schema.NAMES_STAMP_BACKFILL[{i}]", query)
    for i, query in enumerate(COUNT_ALL_ENTITY_FACTS):
        yield Statement(f"newskg.graph.store.factdays.COUNT_ALL_ENTITY_FACTS[{i}]", query)
    yield Statement("newskg.graph.store.schema.ENTITY_WITHOUT_FACTS", ENTITY_WITHOUT_FACTS)


def _browser() -> Iterator[Statement]:
    from newskg.graph.browser import saved_queries

    for name, (query, _params) in saved_queries().items():
        yield Statement(f"graph/browser/queries.cypher:{name}", query)


def statements() -> list[Statement]:
    """Every statement, named by where it is written."""
    found = [*_constants(), *_built(), *_ddl(), *_browser()]
    names = [s.name for s in found]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise ValueError(f"statement names must be unique: {sorted(duplicates)}")
    return found


def for_neo4j() -> list[Statement]:
    return [s for s in statements() if s.scope != "falkordb"]
