"""The explorer's reads (qa/explore.py), shared by Neo4j 5 and FalkorDB and every one "as of D" exactly as the QA
reads are (graph/store/reads.visible with AsOf.params()): an interaction is an edge only if it is visible, it
counts only the sources whose articles were visible, an entity is a node only if it exists as of D
(reads.ENTITY_VISIBLE; for a neighbour, the visible interaction that names it: NEIGHBOURS_AS_OF), and evidence
shows only visible chunks of visible articles. Values are parameters."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from newskg.core.records import Variant
from newskg.core.spikes import days_from
from newskg.core.timeaxes import shift_day
from newskg.graph.connection.base import ConsoleResult, Row
from newskg.graph.store import mentions
from newskg.graph.store.asof import AsOf
from newskg.graph.store.reads import (
    DAILY_COUNTS,
    ENTITY_ALIASES,
    ENTITY_VISIBLE,
    ENTITY_VISIBLE_BY_DAYS,
    day_keys,
    visible,
)
from newskg.graph.store.rows import EntityAsOf, rows_of, shown_aliases
from newskg.graph.store.store import GraphStore

# Entities whose name or an alias visible as of D contains the text (case-insensitive; $q is lower-cased), of the
# type asked: their ids, the $read with the highest bound first (search() counts them in that order; an entity
# without one first). No index serves CONTAINS: every entity's lower-case name (writes.ENTITIES) is read (~25 ms at
# 1 M facts, 100k entities, bench/qa_graph.py). Only the first are sent: "entity 2" is part of 11,111 names there,
# and sending all of them took 51 ms against 38 for the first 336 (as of one day, in process, median of 5). An
# entity's `facts` is an integer count or null (factdays.RECOUNT_ENTITY_FACTS), which _bound orders the same way.
SEARCH_FOUND = f"""
MATCH (e:Entity)
WHERE e.lower CONTAINS $q
WITH collect(e) AS named
OPTIONAL MATCH (x:Entity)-[:ALIAS]->(al:Alias)
WHERE al.lower CONTAINS $q AND {visible("al", "day")}
WITH named, collect(x) AS aliased
WITH named + aliased AS found
UNWIND found AS e
WITH DISTINCT e
WHERE $type IS NULL OR e.type = $type
RETURN e.id AS id, e.facts AS bound
ORDER BY CASE WHEN bound IS NULL THEN 0 ELSE 1 END, bound DESC, id
LIMIT $read
"""
# Those found, as of D, the most interactions first: every one counted, only those kept with their aliases.
# SEARCH_COUNTED walks each one's mentions and facts (a hub's 60k: 60 ms at 1 M, bench/qa_graph.py); a few are
# counted from their daily cells instead (SEARCH_COUNTED_BY_DAYS, reads.ENTITY_VISIBLE_BY_DAYS: a day's cost
# whatever their facts), not thousands, most of them with fewer facts than cells.
_WANTED = """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
WITH e"""
_RANKED = (
    """
WITH e, mentions, interactions ORDER BY interactions DESC, mentions DESC, e.id LIMIT $limit"""
    + ENTITY_ALIASES
    + """
RETURN e.id AS id, e.name AS name, e.type AS type, aliases, mentions, interactions
ORDER BY interactions DESC, mentions DESC, id
"""
)
SEARCH_COUNTED = _WANTED + ENTITY_VISIBLE + _RANKED
SEARCH_COUNTED_BY_DAYS = _WANTED + ENTITY_VISIBLE_BY_DAYS + _RANKED
# At 1 M, 11 entities found cost ~9 ms by their cells and up to that by their walk; the hub alone 1 ms against 60.
SEARCH_FEW = 16
SEARCH_READ = SEARCH_FEW * (1 + 4 + 16) + 1  # the found read at first: three rounds of counting, the next bound
SEARCH_READ_MOST = 2**31 - 1  # FalkorDB 4.16 takes a LIMIT from 2^32 up as 0

# The entity's visible interactions in the day window (one variant or all), the latest first before the limit
# (their sources: SOURCES_OF). NEIGHBOURHOOD walks all its SUBJECT_OF/OBJECT edges: a hub's whole
# history (42,720 facts at 1 M, bench/qa_graph.py: 80 ms) for 500 edges. NEIGHBOURHOOD_BY_DAYS reads only the
# facts of $day_keys, the "<entity id>|<event day>" keys of the window's latest days (writes.INTERACTIONS), by their
# index: the same facts of those days, so when they fill the limit they are the same rows (neighbourhood()). The
# keys are collected before the filter: after a mere WITH, FalkorDB's planner puts the filter's day and ingestion
# ranges into the index scan, 40 ms instead of 1 ms for a hub's 943 facts of two days.
_NEIGHBOURS_BY_EDGES = """
MATCH (e:Entity {id: $entity})-[:SUBJECT_OF|OBJECT]-(x:Interaction)"""
_NEIGHBOURS_BY_DAYS = """
MATCH (x:Interaction)
WHERE x.subject_day IN $day_keys OR x.object_day IN $day_keys
WITH collect(x) AS found
UNWIND found AS x"""
_LATEST = f"""
WITH DISTINCT x
WHERE {visible("x")} AND x.event_day >= $from_day AND x.event_day <= $to_day
  AND ($variant IS NULL OR x.variant = $variant)
WITH x ORDER BY x.event_day DESC, x.published_day DESC, x.id LIMIT $limit"""
# Days that do not fill the limit (and are not the whole window) answer nothing.
_FILLED = """
WITH collect(x) AS latest
WHERE size(latest) = $limit OR $whole_window
UNWIND latest AS x"""
_EDGE = """
RETURN x.id AS id, x.text AS text, x.event_day AS event_day, x.published_day AS published_day,
       x.variant AS variant, x.confidence AS confidence, x.subject_id AS subject_id, x.object_id AS object_id
ORDER BY event_day DESC, id
"""
NEIGHBOURHOOD = _NEIGHBOURS_BY_EDGES + _LATEST + _EDGE
NEIGHBOURHOOD_BY_DAYS = _NEIGHBOURS_BY_DAYS + _LATEST + _FILLED + _EDGE
# How many sources had reported each of the edges by D (a fact none had is not a row: 0). Counted for all the
# edges at once: counted per edge after the limit (OPTIONAL MATCH), FalkorDB walked each one's path alone, 25 ms
# for a hub's 500 edges instead of 6 ms. The article's as-of test follows a WITH, or the planner may scan articles by
# day.
SOURCES_OF = f"""
UNWIND $ids AS wanted
MATCH (x:Interaction {{id: wanted}})-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WITH x, a, s
WHERE {visible("a")}
RETURN x.id AS id, count(DISTINCT s) AS n_sources
"""
# The latest days NEIGHBOURHOOD_BY_DAYS tries, in turn, before the walk: a hub fills 500 edges in two days at 1 M,
# an entity of 7k facts in two weeks; work in proportion to those days' facts, not to the entity's history.
RECENT_DAYS = (2, 14)

# The entities with the most facts as of D, as a view of the explorer shows them (NEIGHBOURHOOD with its default
# window: every event day up to D): visible interactions naming the entity as subject or object, a fact with no
# object included. The entity exists as of D since a visible interaction names it (reads.ENTITY_VISIBLE).
MOST_FACTS = f"""
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH e, x
WHERE {visible("x")} AND x.event_day <= $as_of_day
RETURN e.id AS id, e.name AS name, e.type AS type, count(DISTINCT x) AS facts
ORDER BY facts DESC, name, id
LIMIT $limit
"""

# The view's other entities (its focus entities are read by NODES_AS_OF): each is named by a visible interaction of
# the view, which proves it exists as of D, so no recount of its facts is needed. Recounting them (ENTITY_VISIBLE)
# walked every mention and interaction of every neighbour: 450 neighbours of ~1,000 facts each at 1 M interactions,
# 1.4 s server-side (issue #30); their sums of daily mention counts (EntityDay) still cost one cell per day with
# mentions, 180 ms for 90 days. So a neighbour carries its name, type and aliases as of D, and no counts.
NEIGHBOURS_AS_OF = (
    """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
WITH e, null AS mentions, null AS interactions"""
    + ENTITY_ALIASES
    + "RETURN e.id AS id, e.name AS name, e.type AS type, aliases\n"
)

# The view's focus entities, with their counts as of D from their daily counts (a hub's: its days, not its facts).
NODES_AS_OF = (
    """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
WITH e"""
    + ENTITY_VISIBLE_BY_DAYS
    + ENTITY_ALIASES
    + "RETURN e.id AS id, e.name AS name, e.type AS type, aliases, mentions, interactions\n"
)

# One visible interaction with every chunk that states it in a visible article: the evidence and its sources. A
# chunk is read in an article, so it is there as of D when that article is (reads.INTERACTION_SOURCES reads it so);
# the chunk node's own times are those of its first record only.
EVIDENCE = f"""
MATCH (x:Interaction {{id: $id}})
WHERE {visible("x")}
MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE {visible("a")}
RETURN x.text AS text, x.event_day AS event_day, x.variant AS variant, x.confidence AS confidence,
       x.subject_id AS subject_id,
       x.object_id AS object_id, c.id AS chunk_id, c.text AS chunk_text, a.title AS title, a.url AS url,
       s.name AS source, a.published AS published, a.published_day AS published_day, a.ingested_at AS ingested_at
ORDER BY published_day, source, url
"""


@dataclass(frozen=True)
class EdgeRow:
    """NEIGHBOURHOOD: a visible interaction as an edge (object_id None: a fact about the subject alone)."""

    id: str
    text: str
    event_day: int
    published_day: int
    variant: Variant | None
    confidence: float | None
    subject_id: str
    object_id: str | None
    n_sources: int


@dataclass(frozen=True)
class Neighbour:
    """NEIGHBOURS_AS_OF: an entity a visible interaction names, with its aliases as of D (the first ALIAS_CAP in
    code-point order, as rows.EntityAsOf). Its mentions and interactions are not counted (None)."""

    id: str
    name: str
    type: str
    aliases: list[str] | None
    mentions: None = None
    interactions: None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "aliases", shown_aliases(self.aliases))


@dataclass(frozen=True)
class EvidenceRow:
    """EVIDENCE: one (chunk, article) that stated the interaction, visible as of D."""

    text: str
    event_day: int
    variant: Variant | None
    confidence: float | None
    subject_id: str
    object_id: str | None
    chunk_id: str
    chunk_text: str | None
    title: str | None
    url: str | None
    source: str | None
    published: str | None
    published_day: int | None
    ingested_at: str | None


@dataclass(frozen=True)
class FactCount:
    """MOST_FACTS: an entity and how many facts a view of it as of D shows."""

    id: str
    name: str
    type: str
    facts: int


@dataclass(frozen=True)
class DayCount:
    day: int
    chunks: int


@dataclass(frozen=True)
class Window:
    """Which interactions an explorer view shows: event days in [first, last], one variant or all."""

    first: int
    last: int
    variant: Variant | None = None


def search(store: GraphStore, text: str, as_of: AsOf, limit: int, entity_type: str | None) -> list[EntityAsOf]:
    """The `limit` entities the text matches with the most facts as of D (then mentions, then id). The matches are
    counted in the order of their facts of all time (`Entity.facts`: factdays.RECOUNT_ENTITY_FACTS), a bound on
    their count as of D, SEARCH_FEW first and four times as many each round, until none left has a bound that
    could rank: a short text that is part of thousands of names counts the few that lead, not all (an entity
    without a bound is counted first). The matches themselves are read SEARCH_READ first, and more only when a
    round needs more. The same rows as counting every match (with writes in between, the reads may see two states
    of the graph, as any two reads of a request do)."""
    if limit < 1:
        return []
    read = SEARCH_READ
    queue: list[Row]
    queue, complete = _found(store, text, as_of, entity_type, read)
    kept: list[EntityAsOf] = []
    counted: set[str] = set()
    start, size = 0, max(SEARCH_FEW, 1)
    while True:
        if start < len(queue) and len(kept) == limit and _bound(queue[start]) < kept[-1].interactions:
            return kept  # the matches not read have no higher bound than this one
        if not complete and start + size >= len(queue):  # the round, and the next bound, need more than were read
            read = min(max(read * 4, len(counted) + size + 1), SEARCH_READ_MOST)
            found, complete = _found(store, text, as_of, entity_type, read)
            queue, start = [r for r in found if r["id"] not in counted], 0
        if start >= len(queue):
            return kept
        ids = [str(row["id"]) for row in queue[start : start + size]]
        query = SEARCH_COUNTED_BY_DAYS if len(ids) <= SEARCH_FEW else SEARCH_COUNTED
        rows = rows_of(EntityAsOf, store.conn.read(query, {"ids": ids, "limit": limit, **as_of.params()}))
        kept = sorted([*kept, *rows], key=lambda e: (-e.interactions, -e.mentions, e.id))[:limit]
        counted.update(ids)
        start, size = start + len(ids), size * 4


def _found(store: GraphStore, text: str, as_of: AsOf, entity_type: str | None, read: int) -> tuple[list[Row], bool]:
    """SEARCH_FOUND's first `read`, in the order they are counted (sorted here too: the rounds rely on it), and
    whether they are all the matches."""
    params = {"q": text.lower(), "type": entity_type, "read": read, **as_of.params()}
    found = store.conn.read(SEARCH_FOUND, params)
    return sorted(found, key=lambda row: (-_bound(row), row["id"])), len(found) < read


def _bound(row: Row) -> float:
    bound = row["bound"]
    return float(bound) if isinstance(bound, int | float) else math.inf  # none: an entity written before the totals


def neighbourhood(store: GraphStore, entity_id: str, as_of: AsOf, window: Window, limit: int) -> list[EdgeRow]:
    """The `limit` latest visible interactions of the window, each with its sources as of D (SOURCES_OF). Read
    from the latest days first (RECENT_DAYS): the rows are ordered by event day before the cut, so once those
    days' facts fill the limit (or the days cover the window) no earlier fact can be among them; else from the
    entity's edges."""
    params: dict[str, object] = {
        "entity": entity_id,
        "from_day": window.first,
        "to_day": window.last,
        "variant": window.variant,
        "limit": limit,
        **as_of.params(),
    }
    edges = _latest_edges(store, entity_id, window, params)
    ids = [edge["id"] for edge in edges]
    reported = store.conn.read(SOURCES_OF, {"ids": ids, **as_of.params()}) if ids else []
    n_sources = {row["id"]: row["n_sources"] for row in reported}
    return rows_of(EdgeRow, [edge | {"n_sources": n_sources.get(edge["id"], 0)} for edge in edges])


def _latest_edges(store: GraphStore, entity_id: str, window: Window, params: dict[str, object]) -> list[Row]:
    for span in RECENT_DAYS:
        first = max(window.first, _days_before(window.last, span - 1))
        keys = day_keys(entity_id, days_from(first, window.last))
        recent = params | {"day_keys": keys, "whole_window": first == window.first}
        edges = store.conn.read(NEIGHBOURHOOD_BY_DAYS, recent)
        if edges or first == window.first:
            return edges
    return store.conn.read(NEIGHBOURHOOD, params)


def _days_before(day: int, days: int) -> int:
    """The day `days` before `day` (0, no day, before the calendar's first)."""
    try:
        return shift_day(day, -days)
    except OverflowError:
        return 0


def day_range(store: GraphStore, as_of: AsOf) -> tuple[int | None, int | None]:
    """The first and last publication day with mentions ingested by D (the date slider's bounds)."""
    known = mentions.day_range(store.conn, as_of.day)
    return known if known else (None, None)


def most_facts(store: GraphStore, as_of: AsOf, limit: int = 1) -> list[FactCount]:
    """The entities with the most facts as of D (nothing published or ingested after D counts, nor an event day
    after D), the most first, then by name: the view the explorer opens on (scripts/explore_url.py)."""
    return rows_of(FactCount, store.conn.read(MOST_FACTS, {"limit": limit, **as_of.params()}))


def nodes(store: GraphStore, ids: list[str], as_of: AsOf) -> list[EntityAsOf]:
    """Those of `ids` that exist as of D, with their mentions and interactions then."""
    if not ids:
        return []
    return rows_of(EntityAsOf, store.conn.read(NODES_AS_OF, {"ids": ids, **as_of.params()}))


def neighbours(store: GraphStore, ids: list[str], as_of: AsOf) -> list[Neighbour]:
    """Those of `ids` that are entities, with their aliases as of D: only for entities a visible interaction names,
    which proves they exist as of D (NEIGHBOURS_AS_OF). The cost is the number of ids, not their facts."""
    if not ids:
        return []
    return rows_of(Neighbour, store.conn.read(NEIGHBOURS_AS_OF, {"ids": ids, **as_of.params()}))


def evidence(store: GraphStore, interaction_id: str, as_of: AsOf) -> list[EvidenceRow]:
    return rows_of(EvidenceRow, store.conn.read(EVIDENCE, {"id": interaction_id, **as_of.params()}))


def daily_mentions(store: GraphStore, entity_id: str, first: int, last: int, as_of: AsOf) -> list[DayCount]:
    """Chunks mentioning the entity per publication day in [first, last], counting only days ingested by D
    (the daily counts graph/store/mentions.py keeps: reads.DAILY_COUNTS)."""
    params = {"entity": entity_id, "from_day": first, "to_day": min(last, as_of.day), "as_of_day": as_of.day}
    return rows_of(DayCount, store.conn.read(DAILY_COUNTS, params))


def console(
    store: GraphStore, query: str, as_of: AsOf, params: Mapping[str, object], timeout_ms: int, max_rows: int
) -> ConsoleResult:
    """The explorer's read-only Cypher console: the user's statement with its parameters and the as-of ones (which
    win), refused if it writes (the server enforces it: graph/connection), stopped after the timeout, the first
    `max_rows` rows kept. Raises ConsoleRefused."""
    return store.conn.console_read(query, {**params, **as_of.params()}, timeout_ms, max_rows)
