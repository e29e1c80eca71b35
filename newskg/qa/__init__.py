"""Query reformulation, retrieval strategies, answers, the HTTP API."""
