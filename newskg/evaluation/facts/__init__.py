"""Fact precision: how many of the facts the graph states are right, read against their chunks (README.md)."""
