"""Batched, idempotent writes (UNWIND … MERGE), one statement per kind, shared by Neo4j 5 and FalkorDB.
Every value arrives as a parameter; no text is ever pasted into the Cypher."""

ARTICLES = """
UNWIND $rows AS a
MERGE (s:Source {id: a.source_id}) ON CREATE SET s.name = a.source
MERGE (ar:Article {id: a.id})
  ON CREATE SET ar.url = a.url, ar.title = a.title, ar.published = a.published, ar.published_day = a.day,
                ar.ingested_at = a.ingested_at, ar.ingested_ms = a.ingested_ms, ar.source_id = a.source_id
MERGE (ar)-[:FROM]->(s)
"""

CHUNKS = """
UNWIND $rows AS c
MERGE (ch:Chunk {id: c.id})
SET ch.text = c.text, ch.day = c.day, ch.published = c.published, ch.ingested_ms = c.ingested_ms,
    ch.ingested_at = c.ingested_at, ch.sentence_start = c.sentence_start, ch.sentence_end = c.sentence_end,
    ch.article_id = c.article_id, ch.source = c.source, ch.source_id = c.source_id, ch.url = c.url,
    ch.title = c.title, ch.marked = c.marked
WITH ch, c
MATCH (ar:Article {id: c.article_id})
MERGE (ch)-[r:IN]->(ar) ON CREATE SET r.day = c.day, r.ingested_ms = c.ingested_ms, r.similarity = c.similarity
"""

ENTITIES = """
UNWIND $rows AS e
MERGE (n:Entity {id: e.id})
ON CREATE SET n.name = e.name, n.type = e.type
SET n.aliases = e.aliases, n.description = e.description
"""

MENTIONS = """
UNWIND $rows AS m
MATCH (ch:Chunk {id: m.chunk_id})
MATCH (n:Entity {id: m.entity_id})
MERGE (ch)-[:MENTIONS]->(n)
"""

INTERACTIONS = """
UNWIND $rows AS i
MATCH (s:Entity {id: i.subject_id})
MERGE (x:Interaction {id: i.id})
  ON CREATE SET x.text = i.text, x.event_day = i.event_day, x.event_iso = i.event_iso,
                x.published_day = i.published_day, x.published_iso = i.published_iso,
                x.ingested_at = i.ingested_at, x.ingested_ms = i.ingested_ms, x.variant = i.variant,
                x.subject_id = i.subject_id, x.object_id = i.object_id
MERGE (s)-[:SUBJECT_OF]->(x)
WITH x, i
UNWIND i.chunk_ids AS cid
MATCH (ch:Chunk {id: cid})
MERGE (x)-[:EVIDENCE]->(ch)
"""

INTERACTION_OBJECTS = """
UNWIND $rows AS i
MATCH (x:Interaction {id: i.id})
MATCH (o:Entity {id: i.object_id})
MERGE (x)-[:OBJECT]->(o)
"""

SIGHTING_CHUNKS = """
UNWIND $rows AS c
MERGE (ch:Chunk {id: c.id})
WITH ch, c
MATCH (ar:Article {id: c.article_id})
MERGE (ch)-[r:IN]->(ar) ON CREATE SET r.similarity = c.similarity
"""

M2_BATCHES = """
UNWIND $rows AS b
MERGE (m:M2Batch {id: b.id}) ON CREATE SET m.pair = b.pair, m.size = size(b.chunk_ids)
WITH m, b
UNWIND b.chunk_ids AS cid
MATCH (c:Chunk {id: cid})
MERGE (m)-[:COVERS]->(c)
"""
