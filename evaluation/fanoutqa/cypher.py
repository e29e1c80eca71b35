"""The read Cypher of FanOutQA-style generation (evaluation/fanoutqa/generate.py), shared by Neo4j 5 and FalkorDB:
parameters only, every read as of a day through the one as-of predicate (graph/store/reads.visible).

The relation is "took part in an interaction with" (SUBJECT_OF or OBJECT of one Interaction); the attribute of
a neighbour is the event day of its interactions with the hub in the window. An article counts for a fact only
when it was visible as of the day and belongs to the chosen source (evaluation/kit/sources.py: `$synthetic`, the
NeoQA stream, whose URLs start with `$synthetic_prefix`; otherwise every other article, the news)."""

from evaluation.kit.sources import ARTICLE_OF_SOURCE
from graph.store.reads import visible

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
