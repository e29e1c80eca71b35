"""Resolve each external system from settings, falling back to the local servers `services up` started.

This is the only module that knows about both the settings and the local service state; stages receive plain
addresses and clients.
"""

from __future__ import annotations

from typing import Any

from core.errors import NewskgError
from core.settings import Settings
from graph.connection import GraphConnection, connect_graph
from ingest.kafka.options import client_options
from newskg.services.state import ServiceState


class NotConfigured(NewskgError, RuntimeError):
    """A server is neither configured nor running locally: the message says which command fixes it."""

    REASON = "not_configured"


def _local_address(settings: Settings, name: str) -> str | None:
    record = ServiceState(settings.services_dir).load().get(name)
    return record.address if record else None


def kafka_bootstrap(settings: Settings) -> str:
    bootstrap = settings.kafka_bootstrap or _local_address(settings, "broker")
    if not bootstrap:
        raise NotConfigured("no Kafka broker: run `newskg services up` or set NEWSKG_KAFKA_BOOTSTRAP")
    return bootstrap


def kafka_options(settings: Settings) -> dict[str, Any]:
    return client_options(settings, kafka_bootstrap(settings))


def graph_uri(settings: Settings) -> str:
    uri = settings.graph_uri or _local_address(settings, "graph")
    if not uri:
        raise NotConfigured("no graph server: run `newskg services up` or set NEWSKG_GRAPH_URI")
    return uri


def open_graph(settings: Settings) -> GraphConnection:
    return connect_graph(graph_uri(settings), settings)


def llm_base_url(settings: Settings) -> str | None:
    """The configured endpoint, else the local llama.cpp server when `services up --llm` started it."""
    return settings.llm_base_url or _local_address(settings, "llm")


def open_qdrant(settings: Settings):
    """The same qdrant-client API for a server (url) and local mode (path): no code path differs above this."""
    from qdrant_client import QdrantClient

    if settings.qdrant_url:
        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantClient(url=settings.qdrant_url, api_key=key)
    path = settings.qdrant_local_path
    path.mkdir(parents=True, exist_ok=True)
    return QdrantClient(path=str(path))


def open_embedder(settings: Settings):
    from graph.mirror.embed import MiniLMEmbedder, OpenAIEmbedder

    if settings.embedding_backend == "openai":
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return OpenAIEmbedder(llm_base_url(settings), key, settings.embedding_model)
    return MiniLMEmbedder()


def open_mirror(settings: Settings):
    """The Qdrant mirror. In local mode the folder admits one process at a time: a second opener
    gets a clear error naming the fix."""
    from graph.mirror.qdrant import VectorMirror

    try:
        client = open_qdrant(settings)
    except RuntimeError as exc:
        if "already accessed" in str(exc):
            raise NotConfigured(
                f"the local Qdrant folder {settings.qdrant_local_path} is in use by another newskg "
                "process (local mode admits one; stop it, or use a Qdrant server via "
                "NEWSKG_QDRANT_URL)"
            ) from exc
        raise
    mirror = VectorMirror(client, open_embedder(settings))
    mirror.ensure()
    return mirror
