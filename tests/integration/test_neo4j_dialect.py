"""The Neo4j dialect, proven without a Neo4j server: Neo4j 5's own compiler front-end (parser and semantic
analysis, npm @neo4j-cypher/language-support, run by scripts/cypher_lint.mjs under Node) over every statement
newskg can send, and the same statements run on FalkorDB.

Two sources of statements, because each misses something the other sees:
- the trace: a representative workload (every store write and read, the M2 bookkeeping, the export, reconcile's
  pages, IRB and FanOutQA generation, the saved Browser queries, the bench reads) on the real FalkorDB with the
  connection recorded — the exact text and parameters sent, so the linter also checks that every `$name` a
  statement uses is passed, and the labels, relationships and properties it reads are ones the workload wrote;
- the static registry (tests/support/cypher_registry.py, complete by tests/unit/test_cypher_registry.py): every
  statement as written, including those the trace cannot reach here (the Neo4j DDL).
Every registered shared statement must appear in the trace, so each one both passes Neo4j's front-end and ran
on FalkorDB; the only Neo4j-only statements are the dialect layer's DDL (graph/store/schema.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, cast
from unittest.mock import patch

import pytest

from bench.determinism import SNAPSHOT_ENTITIES, SNAPSHOT_INTERACTIONS, SNAPSHOT_LINKS
from bench.qa import SCAN
from bench.qa_graph import BULK_INTERACTIONS, build_counts, bulk_row
from bench.replay import ALL_CHUNKS, ALL_FACTS
from bench.synthetic import interaction_between
from newskg.core.records import Entity
from newskg.core.timeaxes import end_of_day_ms
from newskg.evaluation.fanoutqa.generate import generate as fanout_generate
from newskg.evaluation.fanoutqa.generate import reproduce, source_params
from newskg.evaluation.irb.generate import Checker
from newskg.evaluation.irb.generate import generate as irb_generate
from newskg.graph.browser import saved_queries
from newskg.graph.connection.base import DELETE_ALL
from newskg.graph.store import explore, journals, mentions, questions, reads
from newskg.graph.store.asof import AsOf
from newskg.graph.store.export import export_jsonl
from newskg.graph.store.factbounds import FACT_WITHOUT_BOUNDS
from newskg.graph.store.reader import COUNTS_LABELS, FactScope
from newskg.graph.store.schema import (
    ABOUT_BACKFILL,
    DAY_KEYS_BACKFILL,
    ENTITY_LOWER_BACKFILL,
    ENTITY_WITHOUT_FACTS,
    NAMES_STAMP_BACKFILL,
    NEO4J_INDEXES,
    fact_days_backfill,
    neo4j_ddl,
)
from newskg.graph.store.store import GraphStore
from newskg.graph.store.times import graph_times
from newskg.wiring import open_graph
from tests.support.cypher_lint import ToLint, failures, lint
from tests.support.cypher_registry import for_neo4j, statements
from tests.support.full_batch import ADOPTED, DRESSED, PAIR, FullBatch
from tests.support.recording import Sent, recording
from tests.support.records import CHOUPETTE, DOJA
from tests.support.scripted_bolt import ScriptedDriver, bolt

AS_OF = 20230531


def test_the_front_end_rejects_what_neo4j_5_rejects():
    """The linter is Neo4j's own analysis, not a lenient parser: known mistakes each give a diagnostic (and a
    missing node_modules fails here with the command to run, never a skip)."""
    bad = {
        "undefined variable": "MATCH (n) WITH n RETURN m",
        "Neo4j 4 index syntax": "CREATE INDEX ON :Entity(id)",
        "typo": "MATCH (n) RETURN n LIMT 1",
        "FalkorDB-only procedure": "CALL db.idx.fulltext.queryNodes('Entity', 'doja') YIELD node RETURN node",
        "unknown function": "RETURN falkordb.nothing(1) AS x",
        "ORDER BY a variable the aggregation dropped": "MATCH (n:Entity) RETURN count(n) AS k ORDER BY n.name",
        "parameter not passed": "MATCH (n:Entity {id: $id}) RETURN n",
        # one of ours with a variable dropped from a WITH: x is then gone when RETURN reads it
        "our TIMELINE, x dropped": reads.TIMELINE.replace(
            "WITH x, distance, collect(DISTINCT CASE", "WITH distance, collect(DISTINCT CASE"
        ),
    }
    assert bad["our TIMELINE, x dropped"] != reads.TIMELINE
    results = lint([ToLint(name, query, {} if name == "parameter not passed" else None) for name, query in bad.items()])
    assert set(failures(results)) == set(bad), results
    assert lint([ToLint("good", "MATCH (n:Entity {id: $id}) RETURN n.name AS name", {"id": "e"})]) == {"good": []}


# ~0.2 s of CPU a statement (25 s for the registry); on this shared 2-core machine it took up to 110 s.
LONG_LINT_S = 600


@pytest.mark.timeout(LONG_LINT_S + 60)
def test_every_registered_statement_passes_neo4j_5s_front_end():
    results = lint([ToLint(s.name, s.query) for s in for_neo4j()], timeout_s=LONG_LINT_S)
    assert len(results) == len(for_neo4j()) > 100
    assert failures(results) == {}


def test_the_neo4j_ddl_passes_and_is_what_init_runs_on_neo4j():
    ddl = neo4j_ddl()
    assert failures(lint([ToLint(f"ddl[{i}]", s, {}) for i, s in enumerate(ddl)])) == {}
    driver = ScriptedDriver()
    GraphStore(bolt(driver)).init()
    # a graph without the (entity, day) keys' index, the ABOUT edges' and the name stamps' (the scripted server
    # has none) gets them before the DDL, the keys first; the entities' lower-case names; and without the
    # FactDay entity index, the fact cells and counts (the FactDay id constraint first, for their MERGE)
    first = [
        NEO4J_INDEXES,
        *DAY_KEYS_BACKFILL,
        NEO4J_INDEXES,
        *ABOUT_BACKFILL,
        NEO4J_INDEXES,
        *ENTITY_LOWER_BACKFILL,
        NEO4J_INDEXES,
        *NAMES_STAMP_BACKFILL,
        NEO4J_INDEXES,
        *fact_days_backfill("neo4j"),
        ENTITY_WITHOUT_FACTS,  # every entity has its total: nothing to sum
        FACT_WITHOUT_BOUNDS,  # every fact has its salience bounds: nothing to bound
    ]
    assert driver.autocommitted == [(s, {}) for s in [*first, *ddl]]


def test_every_statement_run_many_sends_passes_with_the_parameters_it_passes():
    """The production write path, statement by statement, with the exact parameters it would send over Bolt."""
    driver = ScriptedDriver()
    store = GraphStore(bolt(driver))
    store.write_batch(**cast(dict[str, Any], FullBatch().write_kwargs()))
    store.m2_give_up(PAIR, [DRESSED.id], "schema", 3, "2023-05-04T00:00:00Z")
    store.m2_set_open([(DOJA, CHOUPETTE)], True)
    sent = [statement for tx in driver.committed for statement in tx]
    assert len(sent) == 15  # the write_batch of a full batch: 13 statements; M2 bookkeeping: 2
    registered = {s.query: s.name for s in statements()}
    assert all(query in registered for query, _ in sent), "run_many sends registered statements only"
    results = lint([ToLint(f"{i} {registered[q]}", q, p) for i, (q, p) in enumerate(sent)])
    assert failures(results) == {}


def workload(store: GraphStore) -> None:
    """Every kind of statement the system sends, through the code that sends it."""
    store.write_batch(**cast(dict[str, Any], FullBatch().write_kwargs()))
    store.write_batch(**cast(dict[str, Any], FullBatch().write_kwargs()))  # a re-delivery: the MERGE-only path
    store.m2_give_up(PAIR, [DRESSED.id], "schema", 3, "2023-05-04T00:00:00Z")
    store.m2_set_open([(DOJA, CHOUPETTE)], True)
    interaction_ids = sorted(store.ids("Interaction"))
    chunk_ids = sorted(store.ids("Chunk"))
    assert store.counts()["interactions"] == 2 and len(chunk_ids) == 2
    assert store.find_entities("Doja", as_of=AS_OF)[0].id == DOJA
    store.entity_names()
    store.entity_names(since_ms=store.graph_clock_ms())
    store.entities_as_of([DOJA, CHOUPETTE], AS_OF)
    store.entity_profiles([DOJA])
    store.top_entities(5, AS_OF)
    assert len(store.timeline(DOJA, 20230501, AS_OF, as_of=AS_OF, scope=FactScope("M0", via_chunks=True))) == 2
    # a bare name's answer tries its focus day by the facts' salience bounds first (reads.TOP_OF_THE_DAY)
    salient = FactScope("M0", via_chunks=True, rings_for=1, salient=True)
    assert len(store.timeline(DOJA, 20230501, AS_OF, as_of=AS_OF, focus_day=20230501, scope=salient)) == 1
    store.note_facts(DOJA, 600)  # more facts than a window of one holds: the cut's read (reads.TOP_OF_THE_DAY_CUT)
    assert len(store.timeline(DOJA, 20230501, AS_OF, as_of=AS_OF, limit=1, focus_day=20230501, scope=salient)) == 1
    # a window longer than reads.DAY_KEYS_MAX walks the entity's edges (reads.TIMELINE) and finds the same
    assert len(store.timeline(DOJA, 20220101, AS_OF, as_of=AS_OF, scope=FactScope("M0", via_chunks=True))) == 2
    assert store.init() == []  # a restart's init on a written graph: the keys' index is there, nothing to fill
    store.evidence_sources(interaction_ids, AS_OF)
    store.evidence_sources(chunk_ids, AS_OF, kind="chunk")
    store.entity_chunks(DOJA, 20230501, AS_OF, AS_OF)
    store.sources_of(interaction_ids[0], AS_OF)
    store.ingested_late(20230502, DOJA)
    store.ingested_late(20230502)
    for label in COUNTS_LABELS:
        store.ids(label)
    store.interactions(interaction_ids)
    store.chunks(chunk_ids)
    store.m2_pending(DOJA, CHOUPETTE, PAIR)
    store.m2_open_pairs()
    mentions.window_counts(store.conn, 20230501, AS_OF, AS_OF)
    mentions.days_mentioned(store.conn, [DOJA], AS_OF, AS_OF)
    mentions.pair_counts(store.conn, [DOJA], 20230501, AS_OF, AS_OF)
    mentions.daily_counts(store.conn, DOJA, 20230501, AS_OF, AS_OF)
    mentions.day_range(store.conn, AS_OF)
    mentions.entities_first_seen(store.conn)
    assert journals.written(store.conn, [r.id for r in FullBatch().journals]) == {r.id for r in FullBatch().journals}
    assert len(list(journals.all_in_order(store.conn))) == 2
    logged = {key for key, _, _ in journals.bodies(store.conn, [r.id for r in FullBatch().journals])}
    assert logged == {r.id for r in FullBatch().journals}  # a whole chunk's journal, put on the linking log again
    assert {p.id for p in journals.chunk_parts(store.conn, chunk_ids)} == set(chunk_ids)
    assert set(journals.written_chunks(store.conn, chunk_ids)) <= set(chunk_ids)  # a re-ingested chunk's lookup
    assert mentions.counted(store.conn, chunk_ids) == set(chunk_ids)  # the chunks whose mentions are counted
    lines: list[object] = []
    export_jsonl(store, lines.append)
    assert export_jsonl(store, lines.append, AS_OF) > 0
    graph_times(store, "Interaction")
    graph_times(store, "Chunk")
    evaluation_reads(store)
    browser_and_bench_reads(store, interaction_ids[0])
    explorer_reads(store, interaction_ids[0])


def evaluation_reads(store: GraphStore) -> None:
    checker = Checker(store, AsOf(AS_OF), "news")
    checker.partners(DOJA, 20230501)
    checker.prefetch_partners([(DOJA, 20230501), (CHOUPETTE, 20230502)])
    checker.name_on_day("D. Cat", 20230501)
    checker.entity_on_day(DOJA, 20230501)
    checker.clause_subjects("", " wore a dress", 20230501)
    checker.interaction_text(sorted(store.ids("Interaction"))[0])
    irb_generate(store, AS_OF, n=4)
    generation = fanout_generate(store, AsOf(AS_OF), window_days=60, min_neighbours=1)
    if generation.questions:
        reproduce(store, generation.questions[0])
    else:  # the tiny graph gave no question: the same read with the parameters reproduce() passes
        params = {**AsOf(AS_OF).params(), **source_params("news"), "from_day": 20230401, "to_day": AS_OF}
        store.conn.read(questions.FANOUT_ANSWER, {**params, "hub": DOJA, "neighbours": [CHOUPETTE]})


def explorer_reads(store: GraphStore, interaction_id: str) -> None:
    """The graph explorer's reads (qa/explore.py sends them through graph/store/explore.py)."""
    as_of = AsOf(AS_OF)
    explore.search(store, "doja", as_of, 10, None)
    with patch.object(explore, "SEARCH_FEW", 0):  # the count of many found: their walk
        explore.search(store, "doja", as_of, 10, None)
    explore.neighbourhood(store, DOJA, as_of, explore.Window(20230501, AS_OF), 500)
    explore.nodes(store, [DOJA, CHOUPETTE], as_of)
    explore.neighbours(store, [DOJA, CHOUPETTE], as_of)
    explore.evidence(store, interaction_id, as_of)
    explore.daily_mentions(store, DOJA, 20230501, AS_OF, as_of)
    explore.most_facts(store, as_of)
    explore.day_range(store, as_of)


def browser_and_bench_reads(store: GraphStore, interaction_id: str) -> None:
    params = {
        "name": "Doja Cat",
        "entity_id": DOJA,
        "from_day": 20230501,
        "to_day": 20230507,
        "as_of_day": AS_OF,
        "as_of_ms": end_of_day_ms(AS_OF),
        "interaction_id": interaction_id,
        "day": 20230501,
    }
    for query, names in saved_queries().values():
        store.conn.read(query, {name: params[name] for name in names})
    scan = {k: params[k] for k in ("from_day", "to_day", "as_of_day", "as_of_ms")}
    store.conn.read(SCAN, {**scan, "entity": DOJA, "limit": 10})
    for query in (SNAPSHOT_ENTITIES, SNAPSHOT_LINKS, SNAPSHOT_INTERACTIONS, ALL_FACTS, ALL_CHUNKS):
        store.conn.read(query)
    store.entity_fact_ids(DOJA, AsOf(AS_OF))  # the hybrid's entity search over a local-mode mirror
    doja, choupette = (Entity(id=i, name=i, type="PERSON") for i in (DOJA, CHOUPETTE))
    chunk = min(store.ids("Chunk"))  # the bench's facts each have one chunk as evidence
    fact = interaction_between(doja, choupette, "Doja Cat met Choupette for the QA bench", 20230501, chunk_ids=[chunk])
    store.conn.run(BULK_INTERACTIONS, {"rows": [bulk_row(fact)]})  # the QA bench's loader, last: it adds a fact
    build_counts(store.conn)  # and its daily counts of the whole graph
    assert store.init() == []  # the fact it added has no salience bounds yet: init bounds it (no DDL to make)


def vocabulary(store: GraphStore) -> dict[str, list[str]]:
    """The labels, relationship types and property keys the workload left in the graph (FalkorDB's catalogue)."""

    def names(procedure: str) -> list[str]:
        return sorted(str(next(iter(row.values()))) for row in store.conn.read(f"CALL {procedure}()"))

    return {
        "labels": names("db.labels"),
        "relationshipTypes": names("db.relationshipTypes"),
        "propertyKeys": names("db.propertyKeys"),
    }


@pytest.fixture(scope="module")
def traced(stack, tmp_path_factory) -> Iterator[tuple[list[Sent], dict[str, list[str]]]]:
    """The workload once for the module, on its own graph of the session's FalkorDB, recorded."""
    from tests.support.isolation import Isolation

    with Isolation(stack, tmp_path_factory.mktemp("neo4j-dialect")) as isolation:
        store = GraphStore(open_graph(isolation.new().settings))
        try:
            with recording(store.conn) as sent:
                store.init()  # FalkorDB's side of the dialect layer
                workload(store)
            graph = vocabulary(store)
            with recording(store.conn) as deleted:
                store.conn.run(DELETE_ALL)
            assert store.counts()["entities"] == 0
            yield [*sent, *deleted], graph
        finally:
            store.conn.close()


@pytest.mark.timeout(LONG_LINT_S + 60)
def test_every_statement_the_workload_sent_to_falkordb_passes_neo4j_5s_front_end(traced):
    """Each statement as sent (text and parameters) on FalkorDB, checked by Neo4j's front-end with the parameters
    declared (a `$x` not passed is a diagnostic) and the graph's own vocabulary (a label, relationship or property
    the workload never wrote is a diagnostic: a typo that would read nothing on either engine)."""
    sent, graph = traced
    falkordb_only = {s.query for s in statements() if s.scope == "falkordb"}
    unique: dict[str, Sent] = {}
    for s in sent:
        if s.query not in falkordb_only:
            unique.setdefault(json.dumps([s.query, sorted(s.params)]), s)
    assert ADOPTED.id in json.dumps([s.params for s in sent], default=str)
    to_lint = [ToLint(f"#{i}", s.query, s.params) for i, s in enumerate(unique.values())]
    assert len(to_lint) > 90
    # A property read is either one the graph holds or a key of a map the caller passes (`UNWIND $rows AS r`
    # ... `r.chunk_id`): the front-end cannot tell a map from a node, so both are the vocabulary.
    passed = sorted({key for s in unique.values() for key in map_keys(dict(s.params))})
    schema = graph | {"propertyKeys": sorted({*graph["propertyKeys"], *passed})}
    found = failures(lint(to_lint, schema=schema, timeout_s=LONG_LINT_S))
    queries = {t.name: t.query for t in to_lint}
    assert found == {}, {name: (queries[name], messages) for name, messages in found.items()}


def map_keys(value: object) -> set[str]:
    """The keys of every map inside a parameter value (rows of an UNWIND, keys of a batched read)."""
    if isinstance(value, dict):
        items = cast(dict[str, object], value)
        return set(items) | {key for item in items.values() for key in map_keys(item)}
    if isinstance(value, list):
        return {key for item in cast(list[object], value) for key in map_keys(item)}
    return set()


def test_every_statement_of_both_engines_ran_on_falkordb_in_the_trace(traced):
    """The registry's shared statements (and FalkorDB's DDL) are all in what FalkorDB ran: none is Neo4j-only by
    accident. The Neo4j-only statements are the dialect layer's DDL (graph/store/schema.py), tested above."""
    sent, _graph = traced
    ran = {s.query for s in sent}
    assert [s.name for s in statements() if s.scope != "neo4j" and s.query not in ran] == []
    assert {s.name for s in statements() if s.query not in ran} == {s.name for s in for_neo4j() if s.scope == "neo4j"}
