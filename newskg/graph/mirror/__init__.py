"""The Qdrant mirror of the graph: embeddings of interactions and chunks with the graph's ids and time axes."""
