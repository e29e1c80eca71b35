"""Read queries shared by Neo4j 5 and FalkorDB. "As of D": only facts published on or before day D and
ingested before the end of D (UTC) are visible, and only the sources that had reported them by then."""

ENTITY_FIND = """
MATCH (e:Entity)
WHERE e.id = $q OR toLower(e.name) = toLower($q) OR any(a IN coalesce(e.aliases, []) WHERE toLower(a) = toLower($q))
OPTIONAL MATCH (e)-[:SUBJECT_OF]->(x:Interaction)
RETURN e.id AS id, e.name AS name, e.type AS type, e.aliases AS aliases, count(x) AS interactions
ORDER BY interactions DESC, id
LIMIT $limit
"""

# Start from the entity and filter after WITH: with the day indexes, FalkorDB's planner would otherwise scan
# interactions by day and test each for the entity (11 ms instead of 0.6 ms on 20k interactions, bench/qa.py).
TIMELINE = """
MATCH (e:Entity {id: $entity})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WITH x
WHERE x.event_day >= $from_day AND x.event_day <= $to_day
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
OPTIONAL MATCH (x)-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE a.published_day <= $as_of_day AND a.ingested_ms <= $as_of_ms
WITH x, collect(DISTINCT s.name) AS sources, collect(DISTINCT a.url) AS urls
RETURN x.id AS id, x.text AS text, x.event_day AS event_day, x.event_iso AS event_iso,
       x.published_day AS published_day, x.ingested_at AS ingested_at, x.variant AS variant,
       x.subject_id AS subject_id, x.object_id AS object_id, sources, size(sources) AS n_sources, urls
ORDER BY event_day, id
LIMIT $limit
"""

IDS_PAGE = """
MATCH (n:{label}) WHERE n.id > $after{extra}
RETURN n.id AS id ORDER BY id LIMIT $limit
"""

INTERACTIONS_BY_ID = """
UNWIND $ids AS wanted
MATCH (x:Interaction {id: wanted})
OPTIONAL MATCH (x)-[:EVIDENCE]->(c:Chunk)
OPTIONAL MATCH (c)-[:IN]->(a:Article)
OPTIONAL MATCH (s:Entity {id: x.subject_id})
OPTIONAL MATCH (o:Entity {id: x.object_id})
RETURN x.id AS id, x.text AS text, x.subject_id AS subject_id, s.name AS subject_name, x.object_id AS object_id,
       o.name AS object_name, x.event_day AS event_day, x.published_day AS published_day,
       x.ingested_at AS ingested_at, x.ingested_ms AS ingested_ms, x.variant AS variant,
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

INTERACTION_SOURCES = """
MATCH (x:Interaction {id: $id})-[:EVIDENCE]->(c:Chunk)-[r:IN]->(a:Article)-[:FROM]->(s:Source)
RETURN s.name AS source, a.url AS url, a.title AS title, a.published_day AS published_day, c.id AS chunk_id
ORDER BY published_day, source
"""

TOP_ENTITIES = """
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
RETURN e.id AS id, e.name AS name, e.type AS type, count(DISTINCT x) AS interactions,
       min(x.event_day) AS first_day, max(x.event_day) AS last_day
ORDER BY interactions DESC, name
LIMIT $limit
"""

INTERACTION_SOURCES_AS_OF = """
UNWIND $ids AS wanted
MATCH (x:Interaction {id: wanted})-[:EVIDENCE]->(c:Chunk)-[:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE a.published_day <= $as_of_day AND a.ingested_ms <= $as_of_ms
RETURN wanted AS id, collect(DISTINCT s.name) AS sources, collect(DISTINCT a.url) AS urls
"""

CHUNK_SOURCES_AS_OF = """
UNWIND $ids AS wanted
MATCH (c:Chunk {id: wanted})-[:IN]->(a:Article)-[:FROM]->(s:Source)
WHERE a.published_day <= $as_of_day AND a.ingested_ms <= $as_of_ms
RETURN wanted AS id, collect(DISTINCT s.name) AS sources, collect(DISTINCT a.url) AS urls
"""

ENTITY_CHUNKS = """
MATCH (e:Entity {id: $entity})<-[:MENTIONS]-(c:Chunk)
WITH c
WHERE c.day >= $from_day AND c.day <= $to_day AND c.day <= $as_of_day AND c.ingested_ms <= $as_of_ms
RETURN c.id AS id, c.text AS text, c.day AS day
ORDER BY day DESC, id
LIMIT $limit
"""
