"""Read queries shared by Neo4j 5 and FalkorDB, every one of them "as of D" (graph/store/asof.py): only facts,
chunks and articles published on or before day D and ingested before the end of D (UTC) are visible, only the
sources that had reported them by then, and only the entities a visible chunk mentions."""


def visible(alias: str, day_property: str = "published_day") -> str:
    """The one as-of predicate, for a node with a publication day and an ingestion instant (Interaction,
    Article: `published_day`; Chunk: `day`). Its values are always the parameters of AsOf.params(); the alias
    and property come from this module, never from input."""
    return f"{alias}.{day_property} <= $as_of_day AND {alias}.ingested_ms <= $as_of_ms"


# An entity exists as of D once a visible chunk mentions it or a visible interaction names it; its popularity is
# how many visible chunks mention it (the count the linker's alias index keeps) and how many visible interactions
# it takes part in. The one definition of "entity as of D", shared by resolution, /v1/entities, the CLI, the
# export and the saved Browser queries. (Counting with CASE rather than filtering the OPTIONAL MATCH keeps
# FalkorDB's planner walking from the entity instead of scanning a day index: 30% faster here.)
ENTITY_VISIBLE = f"""
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, count(DISTINCT CASE WHEN {visible("c", "day")} THEN c END) AS mentions
OPTIONAL MATCH (e)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH e, mentions, count(DISTINCT CASE WHEN {visible("x")} THEN x END) AS interactions
WHERE mentions > 0 OR interactions > 0
"""


def day_ordinal(day: str) -> str:
    """Cypher for the calendar day number of a yyyymmdd integer expression (days from civil, H. Hinnant; integer
    arithmetic only, which Neo4j 5 and FalkorDB share), so that distances between days are exact across month
    and year ends: ordinal(20230301) - ordinal(20230228) = 1. `day` is a property or parameter name of this
    module, never input."""
    year = f"({day} / 10000 - CASE WHEN ({day} / 100) % 100 <= 2 THEN 1 ELSE 0 END)"  # March-based years
    year_of_era = f"({year} % 400)"
    day_of_year = f"((153 * ((({day} / 100) % 100 + 9) % 12) + 2) / 5 + {day} % 100 - 1)"
    return f"({year} / 400 * 146097 + {year_of_era} * 365 + {year_of_era} / 4 - {year_of_era} / 100 + {day_of_year})"


UNIX_EPOCH_DAY = 719468  # day_ordinal(19700101)


def end_of_day_ms(day: str) -> str:
    """Cypher for core.timeaxes.end_of_day_ms of a yyyymmdd integer expression: the last millisecond of the day."""
    return f"(({day_ordinal(day)} - {UNIX_EPOCH_DAY}) * 86400000 + 86399999)"


ALIAS_CAP = 32  # aliases shown per entity: the first visible ones in code-point order (rows.EntityAsOf)

# An alias is an (:Alias) node of its entity dated by the record visible first that showed it (writes.ENTITIES):
# as of D an entity shows only the aliases visible then, the same predicate as a chunk's (its name is never one).
# After ENTITY_VISIBLE (e, mentions, interactions); rows.EntityAsOf orders them and keeps the first ALIAS_CAP.
ENTITY_ALIASES = f"""
OPTIONAL MATCH (e)-[:ALIAS]->(al:Alias)
WHERE {visible("al", "day")} AND al.name <> e.name
WITH e, mentions, interactions, collect(DISTINCT al.name) AS aliases
"""
_ALIASES_AS_OF = (
    ENTITY_ALIASES
    + """
RETURN e.id AS id, e.name AS name, e.type AS type, aliases, mentions, interactions
ORDER BY mentions DESC, interactions DESC, id
"""
)
_ENTITY_AS_OF = ENTITY_VISIBLE + _ALIASES_AS_OF

# Each entity's visibility profile, for every day at once: its mentioning chunks and its interactions grouped by
# (publication day, ingestion day), read from the daily counts the writer keeps (EntityDay:
# graph/store/mentions.py; FactDay: graph/store/factdays.py), one cell per day pair by the entity index. `visible`
# applied to the cells in Python (qa/query.EntityProfile) gives exactly ENTITY_VISIBLE's existence and counts for
# any day and view, so one read serves every day a resolver asks about: AsOf.ms is always the end of a day (or no
# bound), so an item's ingestion instant matters only through its day. Walking every mention and fact instead
# cost a hub's whole degree (355-420 ms for 43k facts at 1 M, bench/qa.py; 1.6 ms by its 180 cells). Items lacking
# either time are counted in no cell, as ENTITY_VISIBLE never sees them; a cell counted down to 0 is left out. The
# end of each ingestion day is computed by the reader (EntityProfile.of_row), once per day: in Cypher it was date
# arithmetic on every cell, ~0.1 ms of the graph server's CPU a read at 1 M facts.
ENTITY_PROFILES = """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
OPTIONAL MATCH (d:EntityDay {entity_id: wanted})
WITH e, wanted, collect(CASE WHEN d.chunks > 0 THEN [d.day, d.ingested_day, d.chunks] END) AS chunk_cells
OPTIONAL MATCH (f:FactDay {entity_id: wanted})
WITH e, chunk_cells,
     collect(CASE WHEN f.facts > 0 THEN [f.day, f.ingested_day, f.facts] END) AS interaction_cells
RETURN e.id AS id, e.name AS name, e.type AS type, chunk_cells, interaction_cells
"""


def _cells_visible(cell: str) -> str:
    """`visible` for a daily count's cell (EntityDay, FactDay): its items are all published on its day and
    ingested on its ingestion day, and AsOf.ms is the end of a day (ENTITY_PROFILES)."""
    return f"{cell}.day <= $as_of_day AND {end_of_day_ms(f'{cell}.ingested_day')} <= $as_of_ms"


# ENTITY_VISIBLE's existence and counts for entity `e`, summed from its daily counts' cells visible as of D (what
# ENTITY_PROFILES reads and qa/query.EntityProfile applies `visible` to): work in proportion to the days it was in
# the news, not to its mentions and facts (a hub's 60k at 1 M, bench/qa_graph.py: 73 ms; 1 ms by its cells). For a
# few entities only: a tail entity of ten facts has as many cells, each an index lookup, so a read of thousands of
# them (explore.SEARCH_COUNTED) costs more than their walk. The cell's day predicates sit in CASE, not in a WHERE, or
# FalkorDB's planner scans the cells' day index.
ENTITY_VISIBLE_BY_DAYS = f"""
OPTIONAL MATCH (d:EntityDay {{entity_id: e.id}})
WITH e, sum(CASE WHEN d.chunks > 0 AND {_cells_visible("d")} THEN d.chunks ELSE 0 END) AS mentions
OPTIONAL MATCH (f:FactDay {{entity_id: e.id}})
WITH e, mentions, sum(CASE WHEN f.facts > 0 AND {_cells_visible("f")} THEN f.facts ELSE 0 END) AS interactions
WHERE mentions > 0 OR interactions > 0
"""

# The entities whose id or name is $q, or one of whose aliases visible as of D is (case-insensitive), each found
# by an index (Entity id and lower, Alias lower): `toLower(e.name) = toLower($q)` scanned every entity (23 ms at
# 1 M facts, 100k entities, bench/qa_graph.py; 0.2 ms by the index).
ENTITY_FIND = (
    f"""
MATCH (e:Entity)
WHERE e.id = $q OR e.lower = toLower($q)
WITH collect(e) AS named
OPTIONAL MATCH (x:Entity)-[:ALIAS]->(al:Alias)
WHERE al.lower = toLower($q) AND {visible("al", "day")}
WITH named, collect(x) AS aliased
WITH named + aliased AS found
UNWIND found AS e
WITH DISTINCT e"""
    + ENTITY_VISIBLE_BY_DAYS
    + _ALIASES_AS_OF
    + "LIMIT $limit\n"
)

ENTITIES_AS_OF = (
    """
UNWIND $ids AS wanted
MATCH (e:Entity {id: wanted})
WITH e"""
    + _ENTITY_AS_OF
)


# The entity's visible interactions in [$from_day, $to_day], the ones nearest $focus_day first (then the latest
# report) before the limit: on a busy entity the focus day is never cut while farther days are kept. $variant
# (M0/M1/M2, or null for all) keeps one extraction variant, before the limit (NEON(Mx) reads only its own).
# An entity's facts: those that name it (subject or object) and, with $via_chunks, those stated by a visible chunk
# that mentions it (the scope NewsRAG reads chunks in: "Google Stadia launched" is a fact of the chunk about
# Stadia even when the extractor's subject was another span). Each fact is still visible only as of its own day.
# Those naming it are found one of two ways, the same facts either way: TIMELINE_BY_DAYS looks up its
# "<entity id>|<day>" keys of each day of the window (window_keys; writes.INTERACTIONS sets them with the edges), work
# in proportion to the window's facts; TIMELINE walks its SUBJECT_OF/OBJECT edges, work in proportion to every fact
# it ever took part in (1,018 facts for a window's 87 at 1 M, bench/qa.py), kept for long windows. Both filter
# after WITH: with the day indexes, FalkorDB's planner would otherwise scan interactions by day and test each for
# the entity (11 ms instead of 0.6 ms on 20k interactions, bench/qa.py).
# Those stated by a chunk that mentions it, likewise: TIMELINE walks every chunk that ever mentioned the entity and
# every fact each states (the hub's 17k chunks at 1 M, bench/qa_graph.py, whatever the window); TIMELINE_BY_DAYS looks
# up the ABOUT edges keyed by the window's days (writes.INTERACTIONS), work in proportion to the window's facts, then
# keeps a candidate only where the walk would have found it: an evidence chunk visible as of D mentions the entity.
# The edges are an index, not the truth, so a chunk re-dated or linked otherwise since changes nothing; they leave out
# the facts the keys name, found by the first part already. The lookup binds neither end: from a bound entity
# FalkorDB's planner walks its edges (the key holds the entity), and with the fact's label it looks the keys up once
# per interaction of the graph (1 s at 50k; only facts have ABOUT edges). Each check walks from one fact to its chunks
# (~10 µs a fact on FalkorDB), so a candidate the rest would drop anyway (not visible as of D, another variant) is
# dropped first: half of them in a window around D. (In the lookup's WHERE, those tests made FalkorDB scan
# interactions by publication day and look the keys up for each: 19 s at 1 M.)
# The two lists are collected on two rows (`naming`), the named facts the grouping key of one of them only: FalkorDB
# hashes a list key whole for every row it groups, and `WITH named, collect(DISTINCT s)` hashed the hub's 7k named
# facts once per stated row (7.7 s of its 7.9 at 1 M, bench/qa_graph.py; 48 s for a 90-day window). The row that names
# looks nothing up: its filter is tested first. (A UNION subquery would say it directly, but Neo4j 5 deprecates
# `CALL { … }` without a scope clause and FalkorDB has no `CALL () { … }`.)
# A fact's sources are those of its articles visible as of D, tested as a value (`shown`), not in the match's WHERE:
# with it there, FalkorDB took 3x as long over a hub's ring (860 facts at 1 M: 32 against 10 ms).
# $top keeps the most salient rows, nearest ring first: a bare name's answer ranks the rings it reads by salience
# and keeps k (qa/retrieve._salience, whose order this is: the sources that carried the fact by D, then its
# confidence plus how near its article's lead it is stated, then the latest published, then the id), so a hub's
# read sends k rows, not the ~900 of its day at 1 M (the client's parsing was 37 ms of the API's CPU). $top =
# $limit keeps every row.
# $rings_for = k (null: no cut) keeps only the nearest days ("rings": the focus day, then ±1, ±2 …) that together
# hold k facts, the last ring whole: what temporal retrieval ranks (qa/retrieve.py). On a busy entity the window
# holds many times k, and the sources of the rest would be read and sent for nothing. The lists collected after
# ORDER BY keep its order, so distances[k - 1] is the k-th nearest.
_NAMED_BY_EDGES = """
MATCH (e:Entity {id: $entity})
OPTIONAL MATCH (e)-[:SUBJECT_OF|OBJECT]-(n:Interaction)
WITH e, collect(DISTINCT n) AS named
UNWIND [true, false] AS naming"""
_STATED_BY_EDGES = f"""
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)<-[:EVIDENCE]-(s:Interaction)
WHERE NOT naming AND $via_chunks AND {visible("c", "day")}
WITH CASE WHEN naming THEN named ELSE [] END AS named, collect(DISTINCT s) AS stated"""


def _stated_by_days(guard: str, keys: str, keep: str, carry: str) -> str:
    """The facts the ABOUT edges keyed by `keys` (a parameter) point to, kept where an evidence chunk visible as of
    D mentions the entity; looked up only on the rows `guard` holds for, and the rows `keep` holds for kept as they
    are, with the variables `carry` (Cypher of this module). The check comes after WITH, as values: in the
    OPTIONAL MATCH's WHERE, FalkorDB took 5x as long over a hub's day (431 candidates at 1 M: 6.2 against 1.3 ms)."""
    return f"""
OPTIONAL MATCH (s)-[a:ABOUT]->()
WHERE {guard} AND $via_chunks AND a.key IN {keys}
OPTIONAL MATCH (s)-[:EVIDENCE]->(c:Chunk)
WITH {carry}, s, c, {visible("s")} AND ($variant IS NULL OR s.variant = $variant) AND {visible("c", "day")} AS shown
WHERE {keep} OR (shown AND (c)-[:MENTIONS]->(e))"""


# The window's filter of a fact {x} and its order within a day, latest reported first: TIMELINE's, and
# TOP_OF_THE_DAY_CUT's, whose proof holds only while the two are the same.
_IN_WINDOW = (
    "{x}.event_day >= $from_day AND {x}.event_day <= $to_day AND "
    + visible("{x}")
    + " AND ($variant IS NULL OR {x}.variant = $variant)"
)
_LATEST_FIRST = "{x}.published_day DESC, {x}.ingested_ms DESC, {x}.id"
_STATED = "collect(DISTINCT CASE WHEN c IS NOT NULL THEN s END) AS stated"
# Ring first: the focus day's facts are looked up before the rest of the window ($focus_keys, then $rest_keys:
# reads.window_keys), and the rest only when the day holds fewer than the rows the read keeps (`enough`: $rings_for,
# or $limit when that is fewer): were it enough, the sort, the limit and the cut below would keep that day alone. A
# hub's day holds hundreds of facts; its window, fifteen times as many, each looked up and checked against its
# chunks for nothing (bench/qa_graph.py). The day's facts ("ring") are counted as the rest of the read filters
# them, each once (a fact whose object was linked after its chunk's edges were written is named and stated). The
# rest is read on rows of their own (`part` 1 and 2) with the guard first, which FalkorDB tests before each lookup;
# the day's list rides on row 0, the only row it is a grouping key of (see `naming` above). The named list is
# likewise emptied on the stated row before its lookups: carried by each of a hub's ~430 stated candidates, it cost
# ~4 ms of FalkorDB's ~21 to project and group (at 1 M; the hub's read 21.4 → 17.5 ms, bench/qa_graph.py).
_STATED_ON_THE_DAY = _stated_by_days("NOT naming", "$focus_keys", "naming", "e, naming, named")
_NAMED_BY_DAYS = f"""
MATCH (e:Entity {{id: $entity}})
OPTIONAL MATCH (n:Interaction)
WHERE n.subject_day IN $focus_keys OR n.object_day IN $focus_keys
WITH e, collect(DISTINCT n) AS named
UNWIND [true, false] AS naming
WITH e, naming, CASE WHEN naming THEN named ELSE [] END AS named{_STATED_ON_THE_DAY}
WITH e, named, {_STATED}
WITH e, collect(
  [x IN named WHERE {_IN_WINDOW.format(x="x")}]
  + [x IN stated WHERE x.event_day >= $from_day AND x.event_day <= $to_day]) AS found
UNWIND reduce(ring = [], facts IN found | ring + facts) + [null] AS x
WITH DISTINCT e, x
WITH e, collect(x) AS ring
WITH e, ring, size(ring) >= CASE WHEN $rings_for IS NULL OR $rings_for > $limit THEN $limit ELSE $rings_for END
     AS enough
UNWIND [0, 1, 2] AS part
WITH e, enough, part, CASE WHEN part = 0 THEN ring ELSE [] END AS ring
OPTIONAL MATCH (n:Interaction)
WHERE part = 1 AND NOT enough AND (n.subject_day IN $rest_keys OR n.object_day IN $rest_keys)
WITH e, part, enough, ring, collect(DISTINCT n) AS named"""
_STATED_BY_DAYS = f"""{_stated_by_days("part = 2 AND NOT enough", "$rest_keys", "part <> 2", "e, part, ring, named")}
WITH ring + named AS named, {_STATED}"""


def weight_of(lead: str) -> str:
    """Salience's second key (qa/retrieve._salience): the fact's confidence plus how near its article's lead it is
    stated, for the sentence index `lead` (a variable or property of this module)."""
    return (
        f"coalesce(x.confidence, 0.0) + CASE WHEN {lead} IS NULL THEN 0.0 ELSE 1.0 / (1.0 + toFloat({lead}) / 3.0) END"
    )


def _sources_as_of(carry: str, chunk: str, article: str, source: str) -> str:
    """A fact x's salience as of D: the sources and urls of its articles visible by D, its lead (the first sentence
    its evidence starts at in them) and weight_of(lead), added to the variables `carry` (x among them). In one place
    because TOP_OF_THE_DAY must rank as TIMELINE_BY_DAYS does (test_as_of_reads compares them row for row). The
    caller names the chunk, article and source: TOP_OF_THE_DAY has bound `c` before, and FalkorDB fails with "Type
    mismatch" when a clause binds a name an earlier one dropped."""
    urls = f"collect(DISTINCT CASE WHEN shown THEN {article}.url END) AS urls"
    lead = f"min(CASE WHEN shown THEN {chunk}.sentence_start END) AS lead"
    return f"""OPTIONAL MATCH (x)-[:EVIDENCE]->({chunk}:Chunk)-[:IN]->({article}:Article)-[:FROM]->({source}:Source)
WITH {carry}, {chunk}, {article}, {source}, {visible(article)} AS shown
WITH {carry}, collect(DISTINCT CASE WHEN shown THEN {source}.name END) AS sources,
     {urls}, {lead}
WITH {carry}, sources, urls, lead, {weight_of("lead")} AS weight"""


# What TIMELINE and TOP_OF_THE_DAY return of each fact x after RETURN (TOP_OF_THE_DAY puts `proven, candidates`
# first): the columns of rows.TimelineRow, which the reader reads either into, by event day then id.
_FACT_ROWS = """x.id AS id, x.text AS text, x.event_day AS event_day, x.event_iso AS event_iso,
       x.published_day AS published_day, x.ingested_at AS ingested_at, x.ingested_ms AS ingested_ms,
       x.variant AS variant, x.confidence AS confidence, x.subject_id AS subject_id, x.object_id AS object_id,
       sources, size(sources) AS n_sources, urls, lead
ORDER BY event_day, id
"""


_TIMELINE_REST = f"""
WITH named + stated AS facts
UNWIND facts AS x
WITH DISTINCT x
WHERE {_IN_WINDOW.format(x="x")}
WITH x, abs({day_ordinal("x.event_day")} - {day_ordinal("$focus_day")}) AS distance
ORDER BY distance, {_LATEST_FIRST.format(x="x")}
LIMIT $limit
WITH collect(x) AS window, collect(distance) AS distances
WITH window, distances,
     CASE WHEN $rings_for IS NULL OR size(window) <= $rings_for THEN null ELSE distances[$rings_for - 1] END AS cut
UNWIND range(0, size(window) - 1) AS i
WITH window[i] AS x, distances[i] AS distance, cut
WHERE cut IS NULL OR distance <= cut
{_sources_as_of("x, distance", "c", "a", "s")}
ORDER BY distance, size(sources) DESC, weight DESC, x.published_day DESC, x.id
LIMIT $top
RETURN {_FACT_ROWS}"""
TIMELINE = _NAMED_BY_EDGES + _STATED_BY_EDGES + _TIMELINE_REST

# A busy entity's bare name, its focus day read by bounds (reader.timeline tries it first; TIMELINE_BY_DAYS is the
# truth it must equal). A hub's day holds ~860 facts at 1 M, and salience needs each one's sources as of D: 3 hops
# and a grouping per fact, half of TIMELINE_BY_DAYS' 17 ms. Each fact carries an upper bound of its salience that
# holds in every view (graph/store/factbounds.py: its sources and its best lead over all its evidence, kept by the
# write path), so the day's candidates (keyed facts, unchecked) are ordered by the bound from properties alone, and
# only the first $examine are checked (visible, of the variant, stated by a visible chunk that mentions the entity)
# and ranked exactly. No candidate left out can outrank the k-th found when the k-th's exact key is ahead of the
# first left out's bound: a fact's exact key is never ahead of its bound (fewer sources visible, a later lead), and
# the published day and id are the same in both. `proven` says so, with at least $top members found (the day holds
# k, so TIMELINE_BY_DAYS reads no other day and cuts at this one) and no more candidates than $limit (its window's
# recency cut takes none). A fact without bounds (written before them) counts as unbounded: examined first. Not
# proven, one row without a fact, carrying `candidates` (the reader then reads TIMELINE_BY_DAYS). Variables are not
# reused once dropped (`t`, `k`, `ch`, `ar`, `so`): FalkorDB failed with "Type mismatch" when a later clause bound a
# name an earlier one had used, and on `shown AND (c)-[:MENTIONS]->(e)` in one WHERE, hence the two WHEREs (the same
# filter: by name, or shown and mentioning).
# A day of more than $limit candidates: TIMELINE_BY_DAYS keeps only the $limit latest reported of its members (its
# window's recency cut), and half the days of the QA bench's 1 M hub hold more than its 1,000 (1,035-1,060): the try
# failed and the whole read followed, 28 ms the two. TOP_OF_THE_DAY_CUT takes the same cut from properties alone
# (13 ms, the same rows): it orders the candidates that pass the window's property checks (_IN_WINDOW: every member
# does, but a fact stated by a chunk is a member only if that chunk is visible and mentions the entity) latest first. A
# member among the first $limit of them is surely in the cut (no more members than candidates are ahead of it); a
# fact after the $limit-th *named* one (named facts that pass are all members) is surely out. The k are ranked among
# the examined that are surely in; one that is neither (near the cut, with facts stated by chunks ahead of it) must
# rank below the k-th, or nothing is proven. The lists stay out of the cut's grouping keys: `head`, not `ranked`
# (grouping 1,000 rows by a 1,000-node list took 70 ms). It costs ~0.25 ms more on a day that needs no cut, so the
# reader asks it only for an entity of more facts than the window holds (a smaller one's day exceeds it only by facts
# stated by chunks: then the whole read follows, as before).
_BOUND_SOURCES = "coalesce({x}.sources_bound, 1000000000)"  # none yet: unbounded (factbounds.py)
_BOUND_WEIGHT = "coalesce({x}.weight_bound, 1000000000.0)"
_NAMED_ON_THE_DAY = "({x}.subject_day IN $focus_keys OR {x}.object_day IN $focus_keys)"


def _later(x: str, y: str) -> str:
    """Cypher: fact x comes after fact y in the window's order within a day (_LATEST_FIRST)."""
    return (
        f"({x}.published_day < {y}.published_day OR ({x}.published_day = {y}.published_day AND "
        f"({x}.ingested_ms < {y}.ingested_ms OR ({x}.ingested_ms = {y}.ingested_ms AND {x}.id > {y}.id))))"
    )


def _ahead(key: str, other: tuple[str, str, str, str]) -> str:
    """Cypher: the exact salience key `key` ([sources, weight, published day, id]) ranks before `other`'s parts."""
    s, w, d, i = other
    return (
        f"({key}[0] > {s} OR ({key}[0] = {s} AND ({key}[1] > {w} OR ({key}[1] = {w} AND ({key}[2] > {d} OR "
        f"({key}[2] = {d} AND {key}[3] < {i}))))))"
    )


_DAYS_CANDIDATES = f"""
MATCH (e:Entity {{id: $entity}})
OPTIONAL MATCH (n:Interaction)
WHERE n.subject_day IN $focus_keys OR n.object_day IN $focus_keys
WITH e, collect(n) AS named
UNWIND [true, false] AS naming
WITH e, naming, CASE WHEN naming THEN named ELSE [] END AS named
OPTIONAL MATCH (t)-[k:ABOUT]->()
WHERE NOT naming AND $via_chunks AND k.key IN $focus_keys
WITH e, named, collect(t) AS about
UNWIND named + about AS x
WITH DISTINCT e, x
WITH e, x, {_BOUND_SOURCES.format(x="x")} AS bound_sources, {_BOUND_WEIGHT.format(x="x")} AS bound_weight
ORDER BY bound_sources DESC, bound_weight DESC, coalesce(x.published_day, 0) DESC, x.id
WITH e, collect(x) AS ranked"""
_OUT = f"""out.id AS out_id, {_BOUND_SOURCES.format(x="out")} AS out_sources,
     {_BOUND_WEIGHT.format(x="out")} AS out_weight, coalesce(out.published_day, 0) AS out_day"""
_UNCUT = f"""
WITH e, ranked[0..$examine] AS head, size(ranked) AS candidates, ranked[$examine] AS out
WITH e, head, candidates, {_OUT}
UNWIND head AS x
WITH e, candidates, out_id, out_sources, out_weight, out_day, x, true AS surely_in, false AS surely_out,"""
_CUT = f"""
WITH e, size(ranked) > $limit AS cut, ranked[0..$examine] AS head, size(ranked) AS candidates,
     ranked[$examine] AS out, CASE WHEN size(ranked) > $limit THEN ranked ELSE [null] END AS pool
UNWIND pool AS p
WITH e, cut, head, candidates, out, p, cut AND {_IN_WINDOW.format(x="p")} AS passing
ORDER BY {_LATEST_FIRST.format(x="p")}
WITH e, cut, head, candidates, out, collect(CASE WHEN passing THEN p END) AS latest,
     collect(CASE WHEN passing AND {_NAMED_ON_THE_DAY.format(x="p")} THEN p END) AS latest_named
WITH e, cut, latest[$limit - 1] AS last_in, latest_named[$limit - 1] AS last_named, head, candidates, out
WITH e, cut, last_in, last_named, head, candidates, {_OUT}
UNWIND head AS x
WITH e, candidates, out_id, out_sources, out_weight, out_day, x,
     NOT cut OR last_in IS NULL OR NOT {_later("x", "last_in")} AS surely_in,
     cut AND last_named IS NOT NULL AND {_later("x", "last_named")} AS surely_out,"""


def _top_of_the_day(cut: bool) -> str:
    """TOP_OF_THE_DAY (`cut`: TOP_OF_THE_DAY_CUT): the day's candidates by their bounds, the head examined."""
    within = "" if cut else "candidates <= $limit AND "  # uncut: the window's cut must take none of the day
    return f"""{_DAYS_CANDIDATES}{_CUT if cut else _UNCUT}
     {_NAMED_ON_THE_DAY.format(x="x")} AS by_name, {_IN_WINDOW.format(x="x")} AS kept
OPTIONAL MATCH (x)-[:EVIDENCE]->(c:Chunk)
WITH e, candidates, out_id, out_sources, out_weight, out_day, x, surely_in, surely_out, by_name, kept, c,
     {visible("c", "day")} AS shown
WHERE kept AND NOT surely_out AND (by_name OR shown)
WITH e, candidates, out_id, out_sources, out_weight, out_day, x, surely_in, by_name, c
WHERE by_name OR (c)-[:MENTIONS]->(e)
WITH DISTINCT candidates, out_id, out_sources, out_weight, out_day, x, surely_in
{_sources_as_of("candidates, out_id, out_sources, out_weight, out_day, x, surely_in", "ch", "ar", "so")}
ORDER BY size(sources) DESC, weight DESC, x.published_day DESC, x.id
WITH candidates, out_id, out_sources, out_weight, out_day,
     collect([surely_in, x, sources, urls, lead, [size(sources), weight, x.published_day, x.id]]) AS examined
WITH candidates, out_id, out_sources, out_weight, out_day, [m IN examined WHERE m[0]] AS members,
     [u IN examined WHERE NOT u[0] | u[5]] AS maybe
WITH candidates, members, maybe, members[$top - 1][5] AS kth, out_id, out_sources, out_weight, out_day
WITH candidates, members, {within}kth IS NOT NULL
       AND (out_id IS NULL OR {_ahead("kth", ("out_sources", "out_weight", "out_day", "out_id"))})
       AND all(v IN maybe WHERE {_ahead("kth", ("v[0]", "v[1]", "v[2]", "v[3]"))}) AS proven
UNWIND CASE WHEN proven THEN members[0..$top] ELSE [null] END AS row
WITH proven, candidates, row[1] AS x, row[2] AS sources, row[3] AS urls, row[4] AS lead
RETURN proven, candidates, {_FACT_ROWS}"""


TOP_OF_THE_DAY = _top_of_the_day(cut=False)
TOP_OF_THE_DAY_CUT = _top_of_the_day(cut=True)
TIMELINE_BY_DAYS = _NAMED_BY_DAYS + _STATED_BY_DAYS + _TIMELINE_REST
DAY_KEYS_MAX = 62  # the longest window TIMELINE_BY_DAYS reads: one key lookup per day and role


def day_keys(entity_id: str, days: list[int]) -> list[str]:
    """The (entity, day) keys of writes.INTERACTIONS' `subject_day` and `object_day`, one per day."""
    return [f"{entity_id}|{day}" for day in days]


def window_keys(entity_id: str, days: list[int], focus_day: int) -> dict[str, list[str]]:
    """TIMELINE_BY_DAYS' keys: the focus day's, read first, and the rest of the window's."""
    return {
        "focus_keys": day_keys(entity_id, [focus_day]),
        "rest_keys": day_keys(entity_id, [day for day in days if day != focus_day]),
    }


# The resolver's in-memory name index: every entity's name (visible as the entity is: which entities exist is
# asked per day) and its aliases, each as [spelling, day, ingested_ms] so the resolver applies `visible` itself.
# A refresh reads only the entities whose names were stamped at or after `since_ms` (writes.ENTITIES), by the index.
_NAMES_OF_E = """
OPTIONAL MATCH (e)-[:ALIAS]->(al:Alias)
RETURN e.id AS id, e.name AS name,
       collect(CASE WHEN al IS NULL THEN null ELSE [al.name, al.day, al.ingested_ms] END) AS aliases
"""
ENTITY_NAMES = "MATCH (e:Entity)" + _NAMES_OF_E
ENTITY_NAMES_SINCE = "MATCH (e:Entity) WHERE e.names_ms >= $since_ms" + _NAMES_OF_E
# The graph server's clock, which writes.ENTITIES stamps names with: a refresh's cursor is taken on it.
GRAPH_CLOCK = "RETURN timestamp() AS n"

IDS_PAGE = """
MATCH (n:{label}) WHERE n.id > $after{extra}
RETURN n.id AS id ORDER BY id LIMIT $limit
"""


def ids_page(label: str) -> str:
    """IDS_PAGE for one label (a fixed label of the store, never user text). A chunk node a sighting made before
    its kept chunk arrived has no text yet: it is not a chunk until then."""
    return IDS_PAGE.replace("{label}", label).replace("{extra}", " AND n.text IS NOT NULL" if label == "Chunk" else "")


# The two reads below feed the mirror and reconcile (graph → Qdrant copies), not answers: they take no as-of.
INTERACTIONS_BY_ID = """
UNWIND $ids AS wanted
MATCH (x:Interaction {id: wanted})
OPTIONAL MATCH (x)-[:EVIDENCE]->(c:Chunk)
OPTIONAL MATCH (c)-[:IN]->(a:Article)
OPTIONAL MATCH (s:Entity {id: x.subject_id})
OPTIONAL MATCH (o:Entity {id: x.object_id})
RETURN x.id AS id, x.text AS text, x.subject_id AS subject_id, s.name AS subject_name, x.object_id AS object_id,
       o.name AS object_name, x.event_day AS event_day, x.published_day AS published_day,
       x.ingested_at AS ingested_at, x.ingested_ms AS ingested_ms, x.variant AS variant, x.confidence AS confidence,
       collect(DISTINCT c.id) AS chunk_ids, collect(DISTINCT a.id) AS article_ids,
       collect(DISTINCT a.source_id) AS source_ids
"""

CHUNKS_BY_ID = """
UNWIND $ids AS wanted
MATCH (c:Chunk {id: wanted}) WHERE c.text IS NOT NULL
OPTIONAL MATCH (c)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WITH c, collect(DISTINCT a.id) AS article_ids, collect(DISTINCT s.id) AS source_ids,
     collect(DISTINCT s.name) AS source_names, min(a.ingested_at) AS first_ingested
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
RETURN c.id AS id, c.text AS text, c.day AS day, c.published AS published,
       coalesce(c.ingested_at, first_ingested) AS ingested_at, c.ingested_ms AS ingested_ms,
       coalesce(c.article_id, article_ids[0]) AS article_id, article_ids, source_ids, source_names,
       c.url AS url, c.title AS title, c.sentence_start AS sentence_start, c.sentence_end AS sentence_end,
       collect(DISTINCT e.id) AS entity_ids
"""

INTERACTION_SOURCES = f"""
MATCH (x:Interaction {{id: $id}})-[:EVIDENCE]->(c:Chunk)-[r:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE {visible("x")} AND {visible("a")}
RETURN s.name AS source, a.url AS url, a.title AS title, a.published_day AS published_day, c.id AS chunk_id
ORDER BY published_day, source
"""

TOP_ENTITIES = f"""
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH e, x
WHERE {visible("x")}
RETURN e.id AS id, e.name AS name, e.type AS type, count(DISTINCT x) AS interactions,
       min(x.event_day) AS first_day, max(x.event_day) AS last_day
ORDER BY interactions DESC, name
LIMIT $limit
"""

# The sources of some facts (chunks) that had reported them by D. The article's as-of test comes after WITH: in the
# MATCH's WHERE, FalkorDB's planner scanned every article published by D through the day index and walked back from
# each to the ids (380 ms for 20 facts at 100k interactions, bench/qa.py).
INTERACTION_SOURCES_AS_OF = f"""
UNWIND $ids AS wanted
MATCH (x:Interaction {{id: wanted}})-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WITH wanted, a, s
WHERE {visible("a")}
RETURN wanted AS id, collect(DISTINCT s.name) AS sources, collect(DISTINCT a.url) AS urls
"""

CHUNK_SOURCES_AS_OF = f"""
UNWIND $ids AS wanted
MATCH (c:Chunk {{id: wanted}})-[:IN]->(a:Article)-[:FROM]->(s:Source)
WITH wanted, a, s
WHERE {visible("a")}
RETURN wanted AS id, collect(DISTINCT s.name) AS sources, collect(DISTINCT a.url) AS urls
"""

# The ids of the entity's visible facts (those naming it, as the mirror's `entity_ids` payload holds them), any day
# up to D: the candidates of an entity-filtered semantic search where the mirror cannot filter cheaply (qdrant-client
# local mode tests every point's payload in Python: seconds per query at 1 M points). Filtered after WITH so the
# planner walks from the entity rather than scanning a day index.
ENTITY_FACT_IDS = f"""
MATCH (e:Entity {{id: $entity}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH DISTINCT x
WHERE {visible("x")} AND ($variant IS NULL OR x.variant = $variant)
RETURN x.id AS id
"""

# Newest first within a window that ends at the as-of day: day order is distance order, so the day is kept.
ENTITY_CHUNKS = f"""
MATCH (e:Entity {{id: $entity}})<-[:MENTIONS]-(c:Chunk)
WITH c
WHERE c.day >= $from_day AND c.day <= $to_day AND {visible("c", "day")}
RETURN c.id AS id, c.text AS text, c.day AS day
ORDER BY day DESC, id
LIMIT $limit
"""


def ingested_late(alias: str, day_property: str = "published_day") -> str:
    """Published on or before D but ingested after its end: what the strict view hides and the publication view
    shows (the reason an as-of answer can be empty)."""
    return f"{alias}.{day_property} <= $as_of_day AND {alias}.ingested_ms > $as_of_ms"


# The entity's chunks and facts are collected from its node and filtered in lists: with a WHERE on the MATCH,
# FalkorDB's planner scanned every interaction published by the day through the day index and tested each for
# the entity (28 ms at 1 M interactions, for an entity with three chunks; bench/qa.py).
LATE_FOR_ENTITY = f"""
OPTIONAL MATCH (e:Entity {{id: $entity}})
OPTIONAL MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, collect(DISTINCT c) AS mentioning
WITH e, [c IN mentioning WHERE {ingested_late("c", "day")}] AS late
OPTIONAL MATCH (e)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH late, collect(DISTINCT x) AS named
RETURN size([x IN named WHERE {ingested_late("x")}]) AS facts, size(late) AS chunks,
       reduce(first = null, c IN late |
              CASE WHEN first IS NULL OR c.ingested_ms < first THEN c.ingested_ms ELSE first END) AS first_ingested_ms
"""

LATE_IN_GRAPH = f"""
MATCH (c:Chunk)
WHERE {ingested_late("c", "day")}
WITH count(c) AS chunks, min(c.ingested_ms) AS first_chunk_ms
OPTIONAL MATCH (x:Interaction)
WHERE {ingested_late("x")}
RETURN count(x) AS facts, chunks, first_chunk_ms AS first_ingested_ms
"""


# --- Totals and whole-graph listings: no as-of (the CLI's counts, the linker's alias index at start).
COUNTS = {
    "sources": "MATCH (n:Source) RETURN count(n) AS n",
    "articles": "MATCH (n:Article) RETURN count(n) AS n",
    "chunks": "MATCH (n:Chunk) WHERE n.text IS NOT NULL RETURN count(n) AS n",
    "entities": "MATCH (n:Entity) RETURN count(n) AS n",
    "interactions": "MATCH (n:Interaction) RETURN count(n) AS n",
}

# Entities with when they were first seen, for the linker's alias index at start (as-of linking).
ENTITIES_FIRST_SEEN = """
MATCH (n:Entity)
OPTIONAL MATCH (c:Chunk)-[:MENTIONS]->(n)
WITH n, count(c) AS mentions, min(c.day) AS first_day, min(c.ingested_ms) AS first_ingested_ms
OPTIONAL MATCH (n)-[:ALIAS]->(a:Alias)
WITH n, mentions, first_day, first_ingested_ms, collect(a.name) AS aliases
RETURN n.id AS id, n.name AS name, n.type AS type, aliases, n.description AS description,
       mentions, first_day, first_ingested_ms
ORDER BY id
"""

# --- The linker's journals (graph/store/journals.py): which of these records were written whole, and all of
# them in the order they were made, paged by (order, id) (two replicas can make one order value).
JOURNALS_WRITTEN = """
MATCH (l:Linking) WHERE l.id IN $ids
RETURN l.id AS id
"""

# A chunk written whole before a restart: what the stage re-mirrors and hands M2 instead of linking it again.
WRITTEN_CHUNK_PARTS = """
MATCH (c:Chunk) WHERE c.id IN $ids
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH c, collect(DISTINCT e.id) AS entity_ids
OPTIONAL MATCH (x:Interaction)-[:EVIDENCE]->(c)
RETURN c.id AS id, entity_ids, collect(DISTINCT x.id) AS interaction_ids
"""

JOURNALS_PAGE = """
MATCH (l:Linking)
WHERE l.order > $after OR (l.order = $after AND l.id > $after_id)
RETURN l.id AS id, l.order AS order, l.body AS body
ORDER BY order, id LIMIT $limit
"""


# --- The daily mention counts (graph/store/mentions.py keeps and recounts them): each read is bounded by an
# ingestion day of its own.
# Term frequency in a window of publication days, as of an ingestion day (ingested on or before it).
WINDOW_COUNTS = """
MATCH (d:EntityDay)
WHERE d.day >= $from_day AND d.day <= $to_day AND d.ingested_day <= $ingested_by AND d.chunks > 0
RETURN d.entity_id AS entity, sum(d.chunks) AS chunks
"""

# Document frequency (days as documents) of the candidates, and the number of days, up to the window's end.
DAYS_MENTIONED = """
UNWIND $entities AS eid
MATCH (d:EntityDay {entity_id: eid})
WHERE d.day <= $to_day AND d.ingested_day <= $ingested_by AND d.chunks > 0
RETURN eid AS entity, count(DISTINCT d.day) AS days
"""

DAYS_WITH_MENTIONS = """
MATCH (d:EntityDay)
WHERE d.day <= $to_day AND d.ingested_day <= $ingested_by AND d.chunks > 0
RETURN count(DISTINCT d.day) AS days
"""

# Co-occurrence of each subject with other entities in chunks of the window, as of an ingestion day.
PAIR_COUNTS = """
UNWIND $subjects AS sid
MATCH (:Entity {id: sid})<-[:MENTIONS]-(c:Chunk)
WHERE c.day >= $from_day AND c.day <= $to_day AND c.ingested_day <= $ingested_by
MATCH (c)-[:MENTIONS]->(o:Entity)
WHERE o.id <> sid
RETURN sid AS subject, o.id AS object, count(DISTINCT c) AS chunks
"""

DAILY_COUNTS = """
MATCH (d:EntityDay {entity_id: $entity})
WHERE d.day >= $from_day AND d.day <= $to_day AND d.ingested_day <= $as_of_day
RETURN d.day AS day, sum(d.chunks) AS chunks
ORDER BY day
"""

DAY_RANGE = """
MATCH (d:EntityDay)
WHERE d.chunks > 0 AND d.ingested_day <= $as_of_day
RETURN min(d.day) AS first, max(d.day) AS last
"""


# --- The M2 scheduler's bookkeeping (its writes are in graph/store/m2.py).
# Chunks mentioning both entities that no M2 batch of this pair has covered or given up on, oldest first, with the
# entities each is linked to (the M2 answer's citations are checked against them).
M2_PENDING = """
MATCH (s:Entity {id: $subject})<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(o:Entity {id: $object})
WHERE c.text IS NOT NULL
OPTIONAL MATCH (c)<-[:COVERS]-(b:M2Batch {pair: $pair})
WITH c, b WHERE b IS NULL
OPTIONAL MATCH (c)<-[:GAVE_UP]-(f:M2Failed {pair: $pair})
WITH c, f WHERE f IS NULL
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH c, collect(DISTINCT e.id) AS entity_ids
RETURN c.id AS id, c.text AS text, c.marked AS marked, c.day AS day, c.published AS published,
       c.ingested_at AS ingested_at, c.ingested_ms AS ingested_ms, c.article_id AS article_id, c.source AS source,
       c.source_id AS source_id, c.url AS url, c.title AS title, c.sentence_start AS sentence_start,
       c.sentence_end AS sentence_end, entity_ids
ORDER BY day, ingested_ms, id
"""

M2_OPEN_PAIRS = """
MATCH (m:M2Pair) WHERE m.open = true
RETURN m.subject_id AS subject_id, m.object_id AS object_id
ORDER BY subject_id, object_id
"""


# --- The time axes of every interaction and chunk node (and a fact's confidence, set with them by its first record),
# paged by id: what reconcile compares with the mirror's payloads (no as-of: it compares copies).
INTERACTION_TIMES_PAGE = """
MATCH (n:Interaction) WHERE n.id > $after
RETURN n.id AS id, n.event_day AS event_day, n.published_day AS published_day, n.ingested_ms AS ingested_ms,
       n.ingested_at AS ingested_at, n.confidence AS confidence
ORDER BY id LIMIT $limit
"""

# A chunk node a sighting made before its kept chunk arrived has no text yet: it is not a chunk until then.
CHUNK_TIMES_PAGE = """
MATCH (n:Chunk) WHERE n.id > $after AND n.text IS NOT NULL
RETURN n.id AS id, n.day AS day, n.ingested_ms AS ingested_ms, n.ingested_at AS ingested_at
ORDER BY id LIMIT $limit
"""

TIMES_PAGES = {"Interaction": INTERACTION_TIMES_PAGE, "Chunk": CHUNK_TIMES_PAGE}


# --- The export (graph/store/export.py): the whole graph, or as of a day.
# Label → how a node of it is visible. The timed nodes carry their own days; a source exists once a visible
# article is from it, an entity once a visible chunk or interaction names it (reads.ENTITY_VISIBLE), an M2 batch
# once the last of its chunks is visible (it cannot have run before).
def _entity_exists(entity: str, carried: str) -> str:
    """ENTITY_VISIBLE's existence test for the entity variable `entity`, carrying the variables `carried` (names of
    this module, never input): an alias as of D shows only with its entity (a KB alias is visible always)."""
    return f"""
OPTIONAL MATCH ({entity})<-[:MENTIONS]-(ec:Chunk)
WITH {carried}, count(DISTINCT CASE WHEN {visible("ec", "day")} THEN ec END) AS entity_mentions
OPTIONAL MATCH ({entity})-[:SUBJECT_OF|OBJECT]-(ex:Interaction)
WITH {carried}, entity_mentions, count(DISTINCT CASE WHEN {visible("ex")} THEN ex END) AS entity_interactions
WHERE entity_mentions > 0 OR entity_interactions > 0
"""


_BATCH_RAN = (
    "WITH n, max(c.day) AS last_day, max(c.ingested_ms) AS last_ms "
    "WHERE last_day <= $as_of_day AND last_ms <= $as_of_ms"
)
EXPORT_NODE_AS_OF = {
    "Source": f"MATCH (n:Source)<-[:FROM]-(a:Article) WHERE n.id > $after AND {visible('a')}",
    "Article": f"MATCH (n:Article) WHERE n.id > $after AND {visible('n')}",
    "Chunk": f"MATCH (n:Chunk) WHERE n.id > $after AND {visible('n', 'day')}",
    "Entity": "MATCH (e:Entity) WHERE e.id > $after " + ENTITY_VISIBLE + " WITH e AS n",
    # an alias as of D: its first record was visible then (writes.ENTITIES), and so is its entity
    "Alias": f"MATCH (e:Entity)-[:ALIAS]->(n:Alias) WHERE n.id > $after AND {visible('n', 'day')}"
    + _entity_exists("e", "n, e"),
    "Interaction": f"MATCH (n:Interaction) WHERE n.id > $after AND {visible('n')}",
    "M2Batch": f"MATCH (n:M2Batch)-[:COVERS]->(c:Chunk) WHERE n.id > $after {_BATCH_RAN}",
    # A daily mention count is a cell per (publication day, ingestion day): visible when both are on or before D
    # (an export as of D is the strict, ingested view).
    "EntityDay": "MATCH (n:EntityDay) WHERE n.id > $after AND n.day <= $as_of_day AND n.ingested_day <= $as_of_day "
    "AND n.chunks > 0",
    # A daily fact count likewise (graph/store/factdays.py; a cell with no fact is deleted, never kept at 0).
    "FactDay": "MATCH (n:FactDay) WHERE n.id > $after AND n.day <= $as_of_day AND n.ingested_day <= $as_of_day",
}

# Relationship → the MATCH that makes (a)-[r]->(b) visible. Where an end's visibility follows from the other's
# (a visible article's source, a visible chunk's mentioned entities, the entities of a visible interaction, the
# chunks of a visible M2 batch) only the timed end is tested.
EXPORT_REL_AS_OF = {
    "FROM": f"MATCH (a)-[r:FROM]->(b) WHERE {visible('a')}",
    "IN": f"MATCH (a)-[r:IN]->(b) WHERE {visible('a', 'day')} AND {visible('b')}",
    "MENTIONS": f"MATCH (a)-[r:MENTIONS]->(b) WHERE {visible('a', 'day')}",
    "ALIAS": f"MATCH (a)-[r:ALIAS]->(b) WHERE {visible('b', 'day')}" + _entity_exists("a", "a, r, b"),
    "SUBJECT_OF": f"MATCH (a)-[r:SUBJECT_OF]->(b) WHERE {visible('b')}",
    "OBJECT": f"MATCH (a)-[r:OBJECT]->(b) WHERE {visible('a')}",
    "EVIDENCE": f"MATCH (a)-[r:EVIDENCE]->(b) WHERE {visible('a')} AND {visible('b', 'day')}",
    "COVERS": f"MATCH (n:M2Batch)-[:COVERS]->(c:Chunk) {_BATCH_RAN} MATCH (n)-[r:COVERS]->(b) WITH n AS a, r, b",
}


def export_node_query(label: str, as_of: bool) -> str:
    # Labels and types come from the fixed tables of this module, never from input.
    match = EXPORT_NODE_AS_OF[label] if as_of else f"MATCH (n:{label}) WHERE n.id > $after"
    return match + " WITH DISTINCT n RETURN n.id AS id, properties(n) AS p ORDER BY id LIMIT $limit"


def export_rel_query(rel: str, as_of: bool) -> str:
    match = EXPORT_REL_AS_OF[rel] if as_of else f"MATCH (a)-[r:{rel}]->(b)"
    return match + (
        " RETURN a.id AS start, b.id AS end, properties(r) AS p ORDER BY start, end SKIP $skip LIMIT $limit"
    )
