"""The reads of the questions generated from the graph (IRB: evaluation/irb/generate.py; FanOutQA:
evaluation/fanoutqa/generate.py), shared by Neo4j 5 and FalkorDB: parameters only, every read as of a day through
the one as-of predicate (graph/store/reads.visible), every article filtered by the chosen source
(ARTICLE_OF_SOURCE). Each read takes `params`: the as-of parameters (AsOf.params) and the source's
(evaluation/kit/sources.source_params: `$synthetic`, the NeoQA stream, whose URLs start with `$synthetic_prefix`;
otherwise every other article, the news), and returns the rows the generator types itself.

IRB. A fact is an Interaction between two distinct entities, or an entity's clause without an object; its
passages are the chunks that evidence it, visible as of the day, in an article of the source visible as of the
day. A question about two entities asks for one of them given the other, the words of their interaction and its
day; it is at most as broad as "had a reported interaction on day d with", so its answer is unique when exactly
one entity had one with the known entity on that event day (PARTNERS). A question about a clause without an object
asks for its subject; its answer is unique when no other entity's clause that day reads the same around it
(CLAUSE_SUBJECTS).

FanOutQA. The relation is "took part in an interaction with" (SUBJECT_OF or OBJECT of one Interaction); the
attribute of a neighbour is the event day of its interactions with the hub in the window."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from newskg.graph.connection.base import Row
from newskg.graph.store.reader import AsOfReader
from newskg.graph.store.reads import visible

Params = Mapping[str, object]

# True for an Article `a` of the chosen source (a fragment of the reads below).
ARTICLE_OF_SOURCE = (
    "(($synthetic AND coalesce(a.url, '') STARTS WITH $synthetic_prefix) OR "
    "(NOT $synthetic AND NOT coalesce(a.url, '') STARTS WITH $synthetic_prefix))"
)

# --- IRB ---------------------------------------------------------------------------------------------------------
# Every fact of the source as of the day (event day not after it), with its visible passages and their articles:
# interactions between two entities, and an entity's own clauses without an object (M0's subject-centric facts).
FACTS = f"""
MATCH (x:Interaction)
WHERE (x.object_id IS NULL OR x.subject_id <> x.object_id) AND x.event_day <= $as_of_day AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)
WHERE {visible("c", "day")} AND {visible("a")} AND {ARTICLE_OF_SOURCE}
WITH x, c, collect(DISTINCT a.id) AS article_ids
WITH x, collect([c.id, c.text]) AS chunks, collect(article_ids) AS articles
MATCH (s:Entity {{id: x.subject_id}})
OPTIONAL MATCH (o:Entity {{id: x.object_id}})
WITH x, chunks, articles, s, o
WHERE x.object_id IS NULL OR o IS NOT NULL
RETURN x.id AS id, x.text AS text, x.event_day AS event_day,
       s.id AS subject_id, s.name AS subject_name, s.type AS subject_type,
       o.id AS object_id, o.name AS object_name, o.type AS object_type, chunks, articles
ORDER BY id
"""

# The entities that had a visible interaction (either role, reported by the source) with $entity on $event_day:
# the answer-uniqueness count, and the re-check of a generated answer.
PARTNERS = f"""
MATCH (k:Entity {{id: $entity}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH DISTINCT k, x
WHERE x.event_day = $event_day AND x.object_id IS NOT NULL AND x.subject_id <> x.object_id AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)
WHERE {visible("c", "day")} AND {visible("a")} AND {ARTICLE_OF_SOURCE}
WITH DISTINCT k, x
WITH CASE WHEN x.subject_id = k.id THEN x.object_id ELSE x.subject_id END AS other
MATCH (p:Entity {{id: other}})
RETURN DISTINCT p.id AS id, p.name AS name
ORDER BY id
"""

# PARTNERS for many (entity, event day) keys in one round trip (generation asks it of every claim's two ends):
# the same rows, tagged with their key; a key with no partner returns no row.
PARTNERS_MANY = f"""
UNWIND $keys AS key
MATCH (k:Entity {{id: key.entity}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH DISTINCT key, k, x
WHERE x.event_day = key.event_day AND x.object_id IS NOT NULL AND x.subject_id <> x.object_id AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)
WHERE {visible("c", "day")} AND {visible("a")} AND {ARTICLE_OF_SOURCE}
WITH DISTINCT key, k, x
WITH key, CASE WHEN x.subject_id = k.id THEN x.object_id ELSE x.subject_id END AS other
MATCH (p:Entity {{id: other}})
RETURN DISTINCT key.entity AS entity, key.event_day AS event_day, p.id AS id, p.name AS name
ORDER BY entity, event_day, id
"""

# A false premise "an entity named <initial>. <surname> had an interaction on $event_day": how many visible
# interactions that day have a participant whose name fits (0: the graph confirms the premise false).
NAME_ON_DAY = f"""
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WHERE toLower(e.name) STARTS WITH $initial AND toLower(e.name) ENDS WITH $surname
  AND x.event_day = $event_day AND {visible("x")}
RETURN count(DISTINCT x) AS n
"""

# A false premise "$entity had an interaction on $event_day": its visible interactions that day.
ENTITY_ON_DAY = f"""
MATCH (k:Entity {{id: $entity}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WHERE x.event_day = $event_day AND {visible("x")}
RETURN count(DISTINCT x) AS n
"""

# The entities whose visible clause (source-reported) on $event_day reads $prefix <entity> $suffix: the answers of
# "which <kind> <clause> on d?" asked of an interaction without an object, the subject masked. The uniqueness count
# of such a question, and its re-check.
CLAUSE_SUBJECTS = f"""
MATCH (x:Interaction)
WHERE x.event_day = $event_day AND x.text STARTS WITH $prefix AND x.text ENDS WITH $suffix AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)
WHERE {visible("c", "day")} AND {visible("a")} AND {ARTICLE_OF_SOURCE}
WITH DISTINCT x
MATCH (p:Entity {{id: x.subject_id}})
WHERE size(x.text) > size($prefix) + size($suffix)
RETURN DISTINCT p.id AS id, p.name AS name
ORDER BY id
"""

# The text of one interaction by id, visible as of the day (the re-check of a clause question reads its clause).
INTERACTION_TEXT = f"""
MATCH (x:Interaction {{id: $id}})
WHERE {visible("x")}
RETURN x.text AS text
"""

# --- FanOutQA ---------------------------------------------------------------------------------------------------
# Hubs: the entities with the most distinct interaction partners in the window as of the day.
HUB_CANDIDATES = f"""
MATCH (x:Interaction)
WHERE x.object_id IS NOT NULL AND x.subject_id <> x.object_id
  AND x.event_day >= $from_day AND x.event_day <= $to_day AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)
WHERE {visible("a")} AND {ARTICLE_OF_SOURCE}
WITH DISTINCT x
UNWIND [[x.subject_id, x.object_id], [x.object_id, x.subject_id]] AS pair
WITH pair[0] AS hub, count(DISTINCT pair[1]) AS neighbours
WHERE neighbours >= $min_neighbours
MATCH (h:Entity {{id: hub}})
RETURN h.id AS id, h.name AS name, h.type AS type, neighbours
ORDER BY neighbours DESC, id
LIMIT $limit
"""

# One row per (neighbour, interaction) of the hub in the window as of the day, with the articles of the source
# that had reported the interaction by then.
HUB_FACTS = f"""
MATCH (h:Entity {{id: $hub}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH DISTINCT h, x
WHERE x.object_id IS NOT NULL AND x.subject_id <> x.object_id
  AND x.event_day >= $from_day AND x.event_day <= $to_day AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)
WHERE {visible("a")} AND {ARTICLE_OF_SOURCE}
WITH h, x, collect(DISTINCT a.id) AS article_ids, collect(DISTINCT a.url) AS urls
WITH x, article_ids, urls, CASE WHEN x.subject_id = h.id THEN x.object_id ELSE x.subject_id END AS other
MATCH (n:Entity {{id: other}})
RETURN n.id AS id, n.name AS name, n.type AS type, x.id AS interaction_id, x.event_day AS event_day,
       x.text AS text, article_ids, urls
ORDER BY id, event_day, interaction_id
"""

# A generated answer, recomputed: for each neighbour of the hub, the distinct event days of their interactions
# in the window as of the day (a reproduction from the graph, written apart from HUB_FACTS).
FANOUT_ANSWER = f"""
UNWIND $neighbours AS wanted
MATCH (n:Entity {{id: wanted}})-[:SUBJECT_OF|OBJECT]-(x:Interaction)-[:SUBJECT_OF|OBJECT]-(h:Entity {{id: $hub}})
WHERE x.event_day >= $from_day AND x.event_day <= $to_day AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)
WHERE {visible("a")} AND {ARTICLE_OF_SOURCE}
RETURN n.name AS name, collect(DISTINCT x.event_day) AS days
ORDER BY name
"""


# --- the reads ---------------------------------------------------------------------------------------------------
def facts(store: AsOfReader, params: Params) -> list[Row]:
    """FACTS: every fact of the source as of the day, with its visible passages and their articles."""
    return store.conn.read(FACTS, dict(params))


def partners(store: AsOfReader, params: Params, entity_id: str, event_day: int) -> list[Row]:
    """PARTNERS: the entities that had a visible interaction with the entity on the event day."""
    return store.conn.read(PARTNERS, {**params, "entity": entity_id, "event_day": event_day})


def partners_many(store: AsOfReader, params: Params, keys: Iterable[tuple[str, int]]) -> list[Row]:
    """PARTNERS_MANY: PARTNERS of many (entity id, event day) keys in one round trip, each row tagged with its key."""
    return store.conn.read(PARTNERS_MANY, {**params, "keys": [{"entity": e, "event_day": d} for e, d in keys]})


def name_on_day(store: AsOfReader, params: Params, initial: str, surname: str, event_day: int) -> list[Row]:
    """NAME_ON_DAY: how many visible interactions on the day have a participant whose name fits (one row, `n`)."""
    return store.conn.read(NAME_ON_DAY, {**params, "initial": initial, "surname": surname, "event_day": event_day})


def entity_on_day(store: AsOfReader, params: Params, entity_id: str, event_day: int) -> list[Row]:
    """ENTITY_ON_DAY: the entity's visible interactions on the day (one row, `n`)."""
    return store.conn.read(ENTITY_ON_DAY, {**params, "entity": entity_id, "event_day": event_day})


def clause_subjects(store: AsOfReader, params: Params, prefix: str, suffix: str, event_day: int) -> list[Row]:
    """CLAUSE_SUBJECTS: the entities whose visible clause on the day reads prefix + <entity> + suffix."""
    return store.conn.read(CLAUSE_SUBJECTS, {**params, "prefix": prefix, "suffix": suffix, "event_day": event_day})


def interaction_text(store: AsOfReader, params: Params, interaction_id: str) -> list[Row]:
    """INTERACTION_TEXT: the text of one interaction, visible as of the day (no row when it is not)."""
    return store.conn.read(INTERACTION_TEXT, {**params, "id": interaction_id})


def hub_candidates(store: AsOfReader, params: Params, min_neighbours: int, limit: int) -> list[Row]:
    """HUB_CANDIDATES: the entities with the most distinct partners in the window (`params`: from_day, to_day)."""
    return store.conn.read(HUB_CANDIDATES, {**params, "min_neighbours": min_neighbours, "limit": limit})


def hub_facts(store: AsOfReader, params: Params, hub_id: str) -> list[Row]:
    """HUB_FACTS: one row per (neighbour, interaction) of the hub in the window."""
    return store.conn.read(HUB_FACTS, {**params, "hub": hub_id})


def fanout_answer(store: AsOfReader, params: Params, hub_id: str, neighbours: list[str]) -> list[Row]:
    """FANOUT_ANSWER: for each neighbour of the hub, the distinct event days of their interactions in the window."""
    return store.conn.read(FANOUT_ANSWER, {**params, "hub": hub_id, "neighbours": neighbours})
