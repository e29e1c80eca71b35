"""Write Cypher of the M2 scheduler's bookkeeping, shared by Neo4j 5 and FalkorDB: batches given up on
(dead-lettered, never counted as covered) and the pairs with a remainder still waiting (so a restarted stage sends
it too). Its reads (the chunks of a pair no batch has covered yet, the open pairs) are in graph/store/reads.py."""

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
