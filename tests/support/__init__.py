"""Helpers the tests import directly (conftest.py only defines fixtures): the CLI and a local stack
(`cli`), per-test isolation of topics, consumer groups, graph and Qdrant (`isolation`), record and article
factories (`records`, `articles`), a graph with its mirror (`graph_world`), subprocesses and waiting
(`processes`), producing into a topic (`kafka`)."""
