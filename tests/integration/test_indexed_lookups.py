"""Issue #30, the explorer at 1 M facts on the real FalkorDB: reads.ENTITY_FIND looks entities up by their indexes
(id, lower-case name, alias), never by a scan of every entity, and finds what it found before (name in any case, id,
alias, nothing first seen after the as-of day); `graph init` gives a graph written before the lower-case names
their values and index; and the neighbourhood read from the latest days' keys (explore.NEIGHBOURHOOD_BY_DAYS) gives
exactly the rows of the walk over every edge it replaced on an entity with many facts."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from itertools import product
from typing import cast

import pytest
from falkordb.helpers import stringify_param_value

from newskg.core.ids import entity_id
from newskg.core.records import Entity
from newskg.core.spikes import days_from
from newskg.graph.connection import FalkorConnection
from newskg.graph.store import explore, reads
from newskg.graph.store.asof import AsOf
from newskg.graph.store.explore import EdgeRow, Window
from newskg.graph.store.rows import EntityAsOf, rows_of
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.integration.test_explore_api import ADA, BABBAGE, SOCIETY, fact, report
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration

EARLY, LATE = 20230501, 20230520


@pytest.fixture
def store(isolated: Isolated) -> Iterator[GraphStore]:
    """Ada (alias "Countess") and Babbage from EARLY; the Royal Society first named on LATE."""
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    met = report("Ada Lovelace met Charles Babbage.", EARLY, "wire")
    spoke = report("Ada Lovelace spoke at the Royal Society.", LATE, "wire")
    store.write_batch(
        chunks=[met, spoke],
        entities=[ADA, BABBAGE, SOCIETY],
        mentions=[(met.id, ADA.id), (met.id, BABBAGE.id), (spoke.id, ADA.id), (spoke.id, SOCIETY.id)],
        interactions=[fact([met], ADA, BABBAGE, "Ada met Babbage"), fact([spoke], ADA, SOCIETY, "Ada spoke")],
    )
    try:
        yield store
    finally:
        store.conn.close()


def found(store: GraphStore, query: str, day: int) -> list[str]:
    return [e.id for e in store.find_entities(query, as_of=day)]


def test_find_by_name_in_any_case_by_id_and_by_alias_as_of_the_day(store: GraphStore):
    assert found(store, "ada LOVELACE", LATE) == found(store, ADA.id, LATE) == [ADA.id]
    assert found(store, "countess", LATE) == [ADA.id]
    assert found(store, "royal society", EARLY) == found(store, SOCIETY.id, EARLY) == []  # first seen on LATE
    assert found(store, "Royal Society", LATE) == [SOCIETY.id]
    assert found(store, "Ada", LATE) == []  # a whole name, not a part of one


def plan(store: GraphStore, query: str, params: dict[str, object]) -> list[str]:
    """FalkorDB's plan of the statement with these parameters (GRAPH.EXPLAIN)."""
    assert isinstance(store.conn, FalkorConnection)
    header = "CYPHER " + " ".join(f"{key}={stringify_param_value(value)}" for key, value in params.items())
    lines = cast(list[bytes | str], store.conn.execute_command("GRAPH.EXPLAIN", store.conn.graph_name, header + query))
    return [line.decode() if isinstance(line, bytes) else line for line in lines]


def test_find_looks_entities_and_aliases_up_by_their_indexes(store: GraphStore):
    lines = plan(store, reads.ENTITY_FIND, {"q": "Ada Lovelace", "limit": 10, **AsOf.of(LATE).params()})
    scans = {line.strip() for line in lines if "Scan |" in line}
    found = {"(e:Entity)", "(al:Alias)", "(d:EntityDay)", "(f:FactDay)"}  # the counts: the found ones' daily cells
    assert scans == {f"Node By Index Scan | {node}" for node in found}, lines
    assert not any("Chunk" in line or "Interaction" in line for line in lines), lines  # no walk of its mentions


def test_init_backfills_the_lower_case_names_of_an_older_graph(store: GraphStore):
    store.conn.run("MATCH (e:Entity) REMOVE e.lower")
    store.conn.run("DROP INDEX FOR (n:Entity) ON (n.lower)")
    assert found(store, "ada lovelace", LATE) == []  # what an older graph would answer before init
    store.init()
    lowered = store.conn.read("MATCH (e:Entity) RETURN e.name AS name, e.lower AS lower ORDER BY name")
    assert [(r["name"], r["lower"]) for r in lowered] == [
        ("Ada Lovelace", "ada lovelace"),
        ("Charles Babbage", "charles babbage"),
        ("Royal Society", "royal society"),
    ]
    assert found(store, "ADA LOVELACE", LATE) == [ADA.id]


def test_a_renamed_entity_is_found_by_its_new_name_only(store: GraphStore):
    """writes.ENTITIES keeps the name of the record visible first (issue #29): its lower-case name follows it."""
    curie = entity_id("Marie Curie", "PERSON")
    chunk = report("Marie Curie won the prize.", EARLY, "wire")
    later = Entity(id=curie, name="Curie", type="PERSON", seen=(LATE, AsOf.of(LATE).ms))
    store.write_batch(chunks=[chunk], entities=[later], mentions=[(chunk.id, curie)])
    assert found(store, "curie", LATE) == [curie]
    earlier = Entity(id=curie, name="Marie CURIE", type="PERSON", seen=(EARLY, AsOf.of(EARLY).ms))
    store.write_batch(entities=[earlier])
    assert found(store, "marie curie", LATE) == [curie]
    assert found(store, "curie", LATE) == []


# The neighbourhood as it was read before issue #30's change, over every edge of the entity: the oracle.
WALKED_NEIGHBOURHOOD = f"""
MATCH (e:Entity {{id: $entity}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH DISTINCT x
WHERE {reads.visible("x")} AND x.event_day >= $from_day AND x.event_day <= $to_day
  AND ($variant IS NULL OR x.variant = $variant)
WITH x ORDER BY x.event_day DESC, x.published_day DESC, x.id LIMIT $limit
OPTIONAL MATCH (x)-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE {reads.visible("a")}
WITH x, count(DISTINCT s) AS n_sources
RETURN x.id AS id, x.text AS text, x.event_day AS event_day, x.published_day AS published_day,
       x.variant AS variant, x.confidence AS confidence, x.subject_id AS subject_id, x.object_id AS object_id,
       n_sources
ORDER BY event_day DESC, id
"""


def walked(store: GraphStore, entity: str, as_of: AsOf, window: Window, limit: int) -> list[EdgeRow]:
    params = {"entity": entity, "from_day": window.first, "to_day": window.last, "variant": window.variant}
    return rows_of(EdgeRow, store.conn.read(WALKED_NEIGHBOURHOOD, params | {"limit": limit, **as_of.params()}))


def test_the_neighbourhood_from_the_latest_days_is_the_walk_row_for_row(store: GraphStore):
    """A hub with facts on 30 days, some reported (published or ingested) after the as-of day, in both variants,
    some with no source:
    every limit, as-of day, window and variant gives the walk's rows in its order, whether the latest days fill the
    limit or not."""
    days = days_from(20230601, 20230630)
    chunks, facts = [], []
    for n, day in enumerate(days):
        for k in range(n % 4 + 1):
            chunk = report(f"Ada Lovelace met Charles Babbage, talk {day}.{k}.", day, f"source{k}")
            late = 2 * 86_400_000 if k == 3 else 0  # ingested two days after publication
            chunks.append(chunk.model_copy(update={"ingested_ms": chunk.ingested_ms + late}))
            one = fact([chunks[-1]], ADA, BABBAGE if k % 2 else SOCIETY, f"Talk {day}.{k}")
            facts.append(one.model_copy(update={"variant": "M1" if k == 2 else "M0"}))
        if n % 5 == 0:  # a fact no article states: no sources
            alone = fact([chunks[-1]], ADA, BABBAGE, f"Unsourced {day}")
            facts.append(alone.model_copy(update={"chunk_ids": [], "article_ids": [], "source_ids": []}))
    mentions = [(c.id, e.id) for c in chunks for e in (ADA, BABBAGE, SOCIETY)]
    store.write_batch(chunks=chunks, entities=[ADA, BABBAGE, SOCIETY], mentions=mentions, interactions=facts)
    for as_of in (AsOf.of(20230629), AsOf.of(20230610), AsOf.of(None)):
        last = min(as_of.day, 20230630)
        for window in (Window(0, last), Window(20230605, last), Window(0, last, "M1")):
            for limit in (1, 3, 7, 20, 500):
                for entity in (ADA.id, BABBAGE.id):
                    expected = walked(store, entity, as_of, window, limit)
                    assert explore.neighbourhood(store, entity, as_of, window, limit) == expected
    every = walked(store, ADA.id, AsOf.of(20230629), Window(0, 20230629), 500)
    assert len(every) > 50 and any(r.n_sources == 0 for r in every)  # past RECENT_DAYS' days; unsourced facts


def test_the_search_counts_the_same_by_the_cells_as_by_the_walk(store: GraphStore):
    """explore.search counts a few found entities from their daily cells and many by walking their mentions and
    facts: the same rows either way, for every as-of day (the Royal Society first named on LATE)."""
    ids = [ADA.id, BABBAGE.id, SOCIETY.id, "e_nobody"]
    for day, visible in ((20230430, 0), (EARLY, 2), (LATE - 1, 2), (LATE, 3), (None, 3)):
        params = {"ids": ids, "limit": 10, **AsOf.of(day).params()}
        walked = store.conn.read(explore.SEARCH_COUNTED, params)
        assert store.conn.read(explore.SEARCH_COUNTED_BY_DAYS, params) == walked and len(walked) == visible, day
    found = [(e.name, e.interactions) for e in explore.search(store, "a", AsOf.of(LATE), 10, None)]
    assert found == [("Ada Lovelace", 2), ("Charles Babbage", 1), ("Royal Society", 1)]


def test_the_latest_days_are_read_by_their_keys_alone(store: GraphStore):
    """The keyed facts are collected straight from the index scan: with the as-of filter after a mere WITH,
    FalkorDB's planner made it part of the scan (40 ms instead of 1 ms for a hub's two days at 1 M)."""
    keys = reads.day_keys(ADA.id, [LATE - 1, LATE])
    params = {"day_keys": keys, "whole_window": False, "from_day": 0, "to_day": LATE, "variant": None, "limit": 500}
    lines = plan(store, explore.NEIGHBOURHOOD_BY_DAYS, params | AsOf.of(LATE).params())
    scan = next(i for i, line in enumerate(lines) if "Node By Index Scan | (x:Interaction)" in line)
    assert lines[scan - 1].strip() == "Aggregate", lines
    assert not any("Label Scan" in line or "Traverse | (e)" in line for line in lines), lines


# Every entity's facts of all time, by the walk over its edges: what Entity.facts must hold.
FACTS_WALKED = """
MATCH (e:Entity)
OPTIONAL MATCH (e)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
RETURN e.id AS id, e.facts AS kept, count(DISTINCT x) AS walked ORDER BY id
"""


def stars(store: GraphStore) -> list[Entity]:
    """40 "Star" entities, star n in n facts. The 16 with the most (24 to 39) had only 21 reported by June 10 (the rest
    on June 20), the others all theirs by June 5: as of June 10 stars 23 and 22 lead, though 16 others have more facts
    of all time, and the 21-fact ones are within 2 of them. Three are only mentioned."""
    people = [Entity(id=entity_id(f"Star {n}", "PERSON"), name=f"Star {n}", type="PERSON") for n in range(40)]
    chunks, facts, mentions = [], [], []
    for n, star in enumerate(people):
        for k in range(n):
            day = 20230620 if n >= 24 and k >= 21 else 20230605
            chunk = report(f"Star {n} spoke to Ada Lovelace, talk {k}.", day, "wire")
            chunks.append(chunk)
            mentions += [(chunk.id, star.id), (chunk.id, ADA.id)]
            facts.append(fact([chunk], star, ADA, f"Star {n} talk {k}"))
        if n < 3:  # mentioned only
            chunk = report(f"Star {n} was seen.", 20230602, "wire")
            chunks.append(chunk)
            mentions.append((chunk.id, star.id))
    store.write_batch(chunks=chunks, entities=[*people, ADA], mentions=mentions, interactions=facts)
    return people


def test_each_entity_keeps_its_facts_of_all_time_and_init_gives_them_to_an_older_graph(store: GraphStore):
    stars(store)
    kept = store.conn.read(FACTS_WALKED)
    assert all(r["kept"] == r["walked"] and isinstance(r["kept"], int) for r in kept), kept
    assert max(r["walked"] for r in kept) > 40
    store.conn.run("MATCH (e:Entity) REMOVE e.facts")  # a graph written before the totals were kept
    store.init()
    assert store.conn.read(FACTS_WALKED) == kept


def test_the_search_counts_only_the_matches_that_can_rank_and_finds_what_counting_all_does(store: GraphStore):
    """ "star" matches 40 entities; the 5 with the most facts as of the day are those counting every match gives,
    whatever the day, though only the matches whose facts of all time could still rank are counted. Without the
    totals (a graph before init) the rows are the same."""
    people = stars(store)
    reads_of: list[list[str]] = []
    counting = store.conn.read

    def read(query: str, params: dict[str, object] | None = None) -> list[dict[str, object]]:
        if query in (explore.SEARCH_COUNTED, explore.SEARCH_COUNTED_BY_DAYS):
            reads_of.append(cast(list[str], (params or {})["ids"]))
        return counting(query, params)

    store.conn.read = read  # pyright: ignore[reportAttributeAccessIssue] - records what the search counts
    ids = [p.id for p in people]
    for day in (20230601, 20230603, 20230610, 20230625, None):
        for limit in (1, 2, 5, 39, 41):
            every = rows_of(
                EntityAsOf, counting(explore.SEARCH_COUNTED, {"ids": ids, "limit": limit, **AsOf.of(day).params()})
            )
            reads_of.clear()
            assert explore.search(store, "star", AsOf.of(day), limit, None) == every, (day, limit)
            if limit == 5 and day is None:
                assert sum(len(r) for r in reads_of) == explore.SEARCH_FEW  # the 16 busiest settle it
    leaders = explore.search(store, "star", AsOf.of(20230610), 3, None)
    assert [(e.name, e.interactions) for e in leaders[:2]] == [("Star 23", 23), ("Star 22", 22)]
    assert leaders[2].interactions == 21  # a tie of 21-fact stars, broken by mentions, then id
    store.conn.run("MATCH (e:Entity) REMOVE e.facts")
    for day in (20230603, None):
        every = rows_of(EntityAsOf, counting(explore.SEARCH_COUNTED, {"ids": ids, "limit": 5, **AsOf.of(day).params()}))
        assert explore.search(store, "star", AsOf.of(day), 5, None) == every


def test_the_search_reads_the_first_matches_by_bound_and_more_only_when_a_round_needs_them(
    store: GraphStore, monkeypatch: pytest.MonkeyPatch
):
    """explore.SEARCH_READ: the search reads the matches with the highest bounds first (an entity without one
    before them), and more only when a round of counting needs more than it read: whatever the first read and the
    rounds' size, the rows counting every match gives, for every day and limit."""
    people = stars(store)
    store.conn.run("MATCH (e:Entity {name: 'Star 30'}) REMOVE e.facts")  # no bound: read and counted first
    reads_of: list[int] = []
    counting = store.conn.read

    def read(query: str, params: dict[str, object] | None = None) -> list[dict[str, object]]:
        if query == explore.SEARCH_FOUND:
            reads_of.append(cast(int, (params or {})["read"]))
        return counting(query, params)

    store.conn.read = read  # pyright: ignore[reportAttributeAccessIssue] - records the reads of the matches
    ids = [p.id for p in people]
    monkeypatch.setattr(explore, "SEARCH_FEW", 2)
    reads: Counter[int] = Counter()
    for first, day, limit in product((1, 3, 11, 43), (20230601, 20230610, 20230625, None), (1, 2, 5, 39)):
        monkeypatch.setattr(explore, "SEARCH_READ", first)
        every = rows_of(
            EntityAsOf, counting(explore.SEARCH_COUNTED, {"ids": ids, "limit": limit, **AsOf.of(day).params()})
        )
        reads_of.clear()
        assert explore.search(store, "star", AsOf.of(day), limit, None) == every, (first, day, limit)
        assert reads_of[0] == first and reads_of == sorted(set(reads_of)), reads_of  # more each time
        reads[min(len(reads_of), 3)] += 1
    assert reads[1] > 5 and reads[2] > 5 and reads[3] > 5, reads  # settled by the first read, by the next, by more
