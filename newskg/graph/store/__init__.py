"""The Cypher store: schema per dialect, batched idempotent writes, reads."""
