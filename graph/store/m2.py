"""Cypher of the M2 scheduler's bookkeeping, shared by Neo4j 5 and FalkorDB: which chunks of a pair no batch has
covered yet, batches given up on (dead-lettered, never counted as covered) and the pairs with a remainder still
waiting (so a restarted stage sends it too)."""

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

M2_GAVE_UP = """
UNWIND $rows AS b
MERGE (m:M2Failed {id: b.id}) ON CREATE SET m.pair = b.pair, m.size = size(b.chunk_ids), m.reason = b.reason,
                                            m.tries = b.tries, m.at = b.at
WITH m, b
UNWIND b.chunk_ids AS cid
MATCH (c:Chunk {id: cid})
MERGE (m)-[:GAVE_UP]->(c)
"""

M2_PAIR_STATE = """
UNWIND $rows AS p
MERGE (m:M2Pair {pair: p.pair})
SET m.subject_id = p.subject_id, m.object_id = p.object_id, m.open = p.open
"""

M2_OPEN_PAIRS = """
MATCH (m:M2Pair) WHERE m.open = true
RETURN m.subject_id AS subject_id, m.object_id AS object_id
ORDER BY subject_id, object_id
"""
