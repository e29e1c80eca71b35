"""BoltConnection.run_many, the production write path to Neo4j, without a server: a scripted driver stands at
the one seam (BoltConnection's `driver` argument) and records what the real driver would be given. What the
statements say is checked by Neo4j's own front-end in tests/integration/test_neo4j_dialect.py."""

from __future__ import annotations

import json
import re
from typing import Any, cast

import neo4j
import pytest
from neo4j.exceptions import TransientError

from newskg.graph.store import m2, writes
from newskg.graph.store.factbounds import RECOUNT_FACT_BOUNDS
from newskg.graph.store.factdays import RECOUNT_ENTITY_FACTS, RECOUNT_FACT_DAYS
from newskg.graph.store.mentions import MARK_COUNTED, RECOUNT_ENTITY_DAYS
from newskg.graph.store.store import GraphStore
from tests.support.full_batch import PAIR, FullBatch
from tests.support.scripted_bolt import ScriptedDriver, bolt

INT64 = 2**63


def test_run_many_sends_every_statement_in_one_write_transaction_in_order():
    driver = ScriptedDriver()
    params = {"rows": [{"id": "a"}]}
    bolt(driver).run_many([("RETURN 1", params), ("RETURN 2", {})])
    assert driver.transactions == 1
    assert driver.committed == [[("RETURN 1", params), ("RETURN 2", {})]]
    assert driver.sessions == [{"database": "newskg", "default_access_mode": neo4j.WRITE_ACCESS}]


def test_a_transient_error_is_left_to_the_drivers_own_retry():
    """execute_write already retries transient errors (max_transaction_retry_time): run_many must not wrap it in
    a second retry (before: 5 attempts of the driver's whole retry loop, with its own back-off)."""
    driver = ScriptedDriver(fail_with=TransientError("deadlock"))
    with pytest.raises(TransientError):
        bolt(driver).run_many([("RETURN 1", {})])
    assert driver.transactions == 1


def write_full_batch() -> list[tuple[str, dict[str, object]]]:
    driver = ScriptedDriver()
    GraphStore(bolt(driver)).write_batch(**cast(dict[str, Any], FullBatch().write_kwargs()))
    assert driver.transactions == 1, "one consumer batch is one transaction"
    return driver.committed[0]


def test_a_consumer_batch_is_one_transaction_of_its_statements_in_dependency_order():
    sent = [query for query, _ in write_full_batch()]
    assert sent == [
        writes.ARTICLES,
        writes.CHUNKS,  # with its IN edges
        writes.SIGHTING_CHUNKS,
        writes.ENTITIES,
        writes.MENTIONS,
        writes.INTERACTIONS,  # with its OBJECT edges
        writes.M2_BATCHES,
        RECOUNT_ENTITY_DAYS,
        MARK_COUNTED,
        RECOUNT_FACT_DAYS,  # after INTERACTIONS: the cells its facts are in now or leave
        RECOUNT_ENTITY_FACTS,  # after the cells: the totals of the batch's entities
        RECOUNT_FACT_BOUNDS,  # after every write that can raise a fact's salience bound
        writes.LINKING_JOURNALS,  # last: a chunk's journal in the graph means the chunk was written whole
    ]


def test_statements_with_nothing_to_write_are_not_sent():
    driver = ScriptedDriver()
    GraphStore(bolt(driver)).write_batch(entities=FullBatch().entities)
    # the entities' totals too: an entity may be written after its facts
    assert [query for query, _ in driver.committed[0]] == [writes.ENTITIES, RECOUNT_ENTITY_FACTS]
    GraphStore(bolt(driver)).write_batch()
    assert driver.committed[1] == [], "an empty batch is an empty transaction"


def bolt_native(value: object) -> bool:
    """A value Bolt carries as itself: null, bool, 64-bit int, float, string, and lists and string-keyed maps of
    them (no tuples, sets, dates or records: the driver would convert or refuse them)."""
    if value is None or isinstance(value, bool | float | str):
        return True
    if isinstance(value, int):
        return -INT64 <= value < INT64
    if isinstance(value, list):
        return all(bolt_native(item) for item in cast(list[object], value))
    if isinstance(value, dict):
        items = cast(dict[object, object], value).items()
        return all(isinstance(k, str) and bolt_native(v) for k, v in items)
    return False


def row_fields(query: str) -> tuple[str, set[str]] | None:
    """(row variable, the fields the statement reads from it) of an `UNWIND $rows AS x` statement."""
    unwind = re.search(r"UNWIND \$rows AS (\w+)", query)
    if unwind is None:
        return None
    variable = unwind.group(1)
    return variable, set(re.findall(rf"\b{variable}\.(\w+)", query))


def test_every_parameter_is_bolt_native_and_every_row_has_the_fields_its_statement_reads():
    """A field a statement reads and its row lacks is null in Cypher, silently: every row must carry them all."""
    for query, params in write_full_batch():
        assert bolt_native(params), (query, params)
        assert json.loads(json.dumps(params)) == params
        fields = row_fields(query)
        if fields is None:
            # the recounts: the chunk ids (mention counts), interaction ids (fact counts) or interaction and article
            # ids (salience bounds) of the batch, each sorted and distinct
            assert set(params) in ({"chunk_ids"}, {"ids"}, {"ids", "articles"}), (query, params)
            assert all(params[key] == sorted(set(params[key])) for key in params)  # pyright: ignore[reportArgumentType]
            continue
        variable, read = fields
        rows = cast(list[dict[str, object]], params["rows"])
        assert rows and all(read <= set(row) for row in rows), (variable, read, rows)
        assert set(params) == {"rows"}


def test_m2_bookkeeping_goes_through_run_many_with_row_shapes_its_statements_read():
    driver = ScriptedDriver()
    store = GraphStore(bolt(driver))
    store.m2_give_up(PAIR, ["c1", "c2"], "schema", 3, "2023-05-03T00:00:00Z")
    store.m2_set_open([("s", "o")], True)
    store.m2_set_open([], False)  # nothing to write: no transaction
    assert driver.transactions == 2
    for (query, params), expected in zip(
        [statement for tx in driver.committed for statement in tx], [m2.M2_GAVE_UP, m2.M2_PAIR_STATE], strict=True
    ):
        assert query is expected and bolt_native(params)
        fields = row_fields(query)
        assert fields is not None
        rows = cast(list[dict[str, object]], params["rows"])
        assert all(fields[1] <= set(row) for row in rows)
