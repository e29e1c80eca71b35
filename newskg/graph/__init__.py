"""The Cypher store over Neo4j/FalkorDB connections, and its Qdrant mirror."""
