"""The read Cypher of IRB generation (evaluation/irb/generate.py), shared by Neo4j 5 and FalkorDB: parameters
only, every read as of a day through the one as-of predicate (graph/store/reads.visible), every article filtered
by source the way FanOutQA generation filters it (`$synthetic`, `$synthetic_prefix`).

A fact is an Interaction between two distinct entities; its passages are the chunks that evidence it, visible as
of the day, in an article of the source visible as of the day. The relation the questions ask about is "had a
reported interaction on day d with", so an answer is unique when exactly one entity had one with the known
entity on that event day."""

from evaluation.fanoutqa.cypher import _SOURCE as SOURCE_FILTER  # pyright: ignore[reportPrivateUsage]  (one copy)
from graph.store.reads import visible

# Every fact of the source as of the day (event day not after it), with its visible passages and their articles.
FACTS = f"""
MATCH (x:Interaction)
WHERE x.object_id IS NOT NULL AND x.subject_id <> x.object_id AND x.event_day <= $as_of_day AND {visible("x")}
MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)
WHERE {visible("c", "day")} AND {visible("a")} AND {SOURCE_FILTER}
WITH x, c, collect(DISTINCT a.id) AS article_ids
WITH x, collect([c.id, c.text]) AS chunks, collect(article_ids) AS articles
MATCH (s:Entity {{id: x.subject_id}})
MATCH (o:Entity {{id: x.object_id}})
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
WHERE {visible("c", "day")} AND {visible("a")} AND {SOURCE_FILTER}
WITH DISTINCT k, x
WITH CASE WHEN x.subject_id = k.id THEN x.object_id ELSE x.subject_id END AS other
MATCH (p:Entity {{id: other}})
RETURN DISTINCT p.id AS id, p.name AS name
ORDER BY id
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
