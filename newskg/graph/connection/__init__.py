"""Pick the connection class from the URI scheme: falkordb:// (RESP) or bolt:// / neo4j:// (Bolt)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from newskg.core.settings import Settings
from newskg.graph.connection.base import Dialect, GraphConnection, Row
from newskg.graph.connection.falkor import FalkorConnection

if TYPE_CHECKING:
    from newskg.graph.connection.bolt import BoltConnection

DEFAULT_FALKOR_GRAPH = "newskg"
BOLT_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}


def dialect_of(uri: str) -> Dialect:
    """The Cypher dialect a graph URI speaks (the scheme picks the connection class, connect_graph)."""
    scheme = urlsplit(uri).scheme
    if scheme in ("falkordb", "redis"):
        return "falkordb"
    if scheme in BOLT_SCHEMES:
        return "neo4j"
    raise ValueError(f"unsupported graph URI scheme {scheme!r}: use falkordb://, bolt:// or neo4j://")


def connect_graph(uri: str, settings: Settings) -> GraphConnection:
    parts = urlsplit(uri)
    password = settings.graph_password.get_secret_value() if settings.graph_password else None
    if parts.scheme in ("falkordb", "redis"):
        return FalkorConnection(
            parts.hostname or "127.0.0.1",
            parts.port or 6379,
            settings.graph_database or DEFAULT_FALKOR_GRAPH,
            password=password or parts.password,
            username=settings.graph_user or parts.username,
        )
    if parts.scheme in BOLT_SCHEMES:
        from newskg.graph.connection.bolt import BoltConnection

        return BoltConnection(uri, settings.graph_user, password, settings.graph_database)
    raise ValueError(f"unsupported graph URI scheme {parts.scheme!r}: use falkordb://, bolt:// or neo4j://")


def __getattr__(name: str) -> object:
    """BoltConnection on first use: the Neo4j driver takes ~0.3 s to import, and every newskg command imports this
    package, most of them for FalkorDB."""
    if name == "BoltConnection":
        from newskg.graph.connection.bolt import BoltConnection

        return BoltConnection
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_FALKOR_GRAPH",
    "BoltConnection",
    "FalkorConnection",
    "GraphConnection",
    "Row",
    "connect_graph",
    "dialect_of",
]
