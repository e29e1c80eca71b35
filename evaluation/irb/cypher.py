"""The read Cypher of IRB generation (evaluation/irb/generate.py), shared by Neo4j 5 and FalkorDB: parameters
only, every read as of a day through the one as-of predicate (graph/store/reads.visible), every article filtered
by source as FanOutQA generation filters it (evaluation/kit/sources.py).

A fact is an Interaction between two distinct entities, or an entity's clause without an object; its passages
are the chunks that evidence it, visible as of the day, in an article of the source visible as of the day. A
question about two entities asks for one of them given the other, the words of their interaction and its day; it
is at most as broad as "had a reported interaction on day d with", so its answer is unique when exactly one
entity had one with the known entity on that event day (PARTNERS). A question about a clause without an object
asks for its subject; its answer is unique when no other entity's clause that day reads the same around it
(CLAUSE_SUBJECTS)."""

from evaluation.kit.sources import ARTICLE_OF_SOURCE
from graph.store.reads import visible

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
