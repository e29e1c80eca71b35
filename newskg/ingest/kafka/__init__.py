"""Kafka I/O: options, admin, producer, consumer (one adapter for the local broker and production Kafka)."""
