"""Resolve each external system from settings, falling back to the local servers `services up` started, and own
what is opened.

This is the only module that knows about both the settings and the local service state; stages receive plain
addresses and clients. The `open_*` functions hand what they open to their caller, who closes it; `Wiring` is the
bundle one process uses: it opens each server client on demand and closes each exactly once, in reverse order,
when it closes. Nothing it lends (to a stage, a runner, the QA service) is closed by the borrower.
"""

from __future__ import annotations

from contextlib import ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, TypeVar

from newskg.core.errors import NewskgError
from newskg.core.settings import Settings
from newskg.graph.connection import GraphConnection, connect_graph
from newskg.ingest.kafka.options import client_options
from newskg.services.state import ServiceState

if TYPE_CHECKING:  # the heavy clients load only when a command opens them
    from qdrant_client import QdrantClient

    from newskg.core.llm.client import LLMClient
    from newskg.graph.mirror.base import VectorMirror
    from newskg.graph.mirror.embed import Embedder
    from newskg.graph.mirror.embed_cache import CachingEmbedder
    from newskg.graph.store.store import GraphStore
    from newskg.ingest.kafka.consumer import GroupConsumer
    from newskg.ingest.kafka.producer import RecordProducer
    from newskg.qa.query import EntityResolver
    from newskg.qa.retrieve import Retriever
    from newskg.qa.service import QAService


class Closeable(Protocol):
    def close(self) -> object: ...


C = TypeVar("C", bound=Closeable)


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


def open_qdrant(settings: Settings) -> QdrantClient:
    """A qdrant-client for the server (url), else local mode on the embedded folder: the same API either way."""
    from newskg.graph.mirror.qdrant import open_local

    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
        return QdrantClient(url=settings.qdrant_url, api_key=key)
    path = settings.qdrant_local_path
    path.mkdir(parents=True, exist_ok=True)
    return open_local(str(path))


def mirror_engine(settings: Settings) -> str:
    """qdrant-server when NEWSKG_QDRANT_URL is set (production), else the embedded NEWSKG_MIRROR_ENGINE."""
    return "qdrant-server" if settings.qdrant_url else settings.mirror_engine


def new_mirror(settings: Settings, embedder: Embedder) -> VectorMirror:
    """The configured mirror adapter, its collections not ensured (a reader that embeds nothing opens it so)."""
    if mirror_engine(settings) != "edge":
        from newskg.graph.mirror.qdrant import QdrantClientMirror

        return QdrantClientMirror(open_qdrant(settings), embedder)
    from newskg.graph.mirror.edge import EdgeMirror

    return EdgeMirror(settings.qdrant_local_path / "edge", embedder, index_after=settings.mirror_index_after)


def open_embedder(settings: Settings) -> Embedder:
    from newskg.graph.mirror.embed import MiniLMEmbedder, OpenAIEmbedder
    from newskg.graph.mirror.minilm_onnx import OnnxMiniLMEmbedder

    if settings.embedding_backend == "openai":
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        return OpenAIEmbedder(llm_base_url(settings), key, settings.embedding_model)
    if settings.embed_backend == "torch":
        return MiniLMEmbedder()
    return OnnxMiniLMEmbedder(settings.data_dir, threads=settings.embed_threads)


def api_settings(settings: Settings) -> Settings:
    """The settings a QA API process runs with: its embedder's intra-op threads are NEWSKG_API_EMBED_THREADS."""
    return settings.model_copy(update={"embed_threads": settings.api_embed_threads})


def open_cached_embedder(settings: Settings) -> CachingEmbedder:
    """The embedder every process of the product uses: `open_embedder`'s, remembering the vectors of the last
    NEWSKG_EMBED_CACHE_SIZE texts (a query asked again, a text mirrored again, embeds nothing)."""
    from newskg.graph.mirror.embed_cache import CachingEmbedder

    return CachingEmbedder(open_embedder(settings), settings.embed_cache_size)


def open_mirror(settings: Settings, embedder: Embedder | None = None) -> VectorMirror:
    """The mirror with its collections ensured (closing it closes its engine). The embedded folder admits one
    process at a time, on either engine (Qdrant Edge's WAL lock, local mode's folder lock): a second opener gets a
    clear error naming the fix."""
    from newskg.graph.mirror.base import MirrorInUse

    try:
        mirror = new_mirror(settings, embedder or open_embedder(settings))
        try:
            mirror.ensure()
        except BaseException:
            mirror.close()
            raise
    except MirrorInUse as exc:
        raise NotConfigured(
            f"the embedded mirror's folder {settings.qdrant_local_path} is in use by another newskg process "
            f"({mirror_engine(settings)} admits one; stop it, or use a Qdrant server via NEWSKG_QDRANT_URL)"
        ) from exc
    return mirror


class Wiring:
    """Every server client one process uses, opened on demand and owned here: closing the bundle (`with
    Wiring(settings) as wiring:`) closes each exactly once, in the reverse order of opening, also after an error.
    The mirror and the embedder are one per bundle (the embedded mirror admits one opener per folder, and the
    model loads once); graph connections, producers and consumers are one per caller, as each stage has its own."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stack = ExitStack()
        self._embedder: Embedder | None = None
        self._mirror: VectorMirror | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close everything opened so far, last opened first (idempotent: the stack empties as it closes)."""
        self._embedder = self._mirror = None
        self._stack.close()

    def own(self, resource: C) -> C:
        """Take `resource` into the bundle: its `close()` runs once, when the bundle closes."""
        self._stack.callback(resource.close)
        return resource

    def graph(self) -> GraphConnection:
        """A new graph connection of this bundle."""
        return self._stack.enter_context(open_graph(self.settings))

    def store(self, ensure_schema: bool = True) -> GraphStore:
        """A graph store over a new connection, its schema ensured unless the caller only reads and says when
        (`graph init`)."""
        from newskg.graph.store.store import GraphStore

        store = GraphStore(self.graph())
        if ensure_schema:
            store.init()
        return store

    def retriever(self, with_mirror: bool = True) -> Retriever:
        """As-of retrieval over a store of its own, with the bundle's mirror (without it: the graph's reads alone)."""
        from newskg.qa.retrieve import Retriever

        return Retriever(self.store(), self.mirror() if with_mirror else None)

    def resolver(self) -> EntityResolver:
        """Entity resolution as of a day (the QA layer's), over a store of its own."""
        from newskg.qa.query import EntityResolver

        return EntityResolver(self.store())

    def qa_service(self) -> QAService:
        """The QA service over a graph connection of its own and the bundle's mirror."""
        from newskg.qa.service import QAService

        settings = self.settings
        llm = None if settings.qa_answerer == "extractive" else self.llm()
        if settings.qa_answerer == "llm" and llm is None:
            raise NotConfigured("NEWSKG_QA_ANSWERER=llm but no LLM: set NEWSKG_LLM_BASE_URL or `services up --llm`")
        return QAService(self.store(), self.mirror(), llm, settings.qa_backoff_days)

    def over(self, settings: Settings) -> Wiring:
        """A bundle for other settings (another graph: `eval fanoutqa --answerer evidence`), closed with this one."""
        return self.own(Wiring(settings))

    def embedder(self) -> Embedder:
        """The bundle's one embedder, remembering the vectors of recent texts (NEWSKG_EMBED_CACHE_SIZE)."""
        if self._embedder is None:
            self._embedder = open_cached_embedder(self.settings)
        return self._embedder

    def mirror(self) -> VectorMirror:
        """The bundle's one mirror, shared by every stage and the QA service of the process."""
        if self._mirror is None:
            mirror = open_mirror(self.settings, self.embedder())
            self._mirror = self.own(mirror)  # releases the embedded mirror's folder for the next process
        return self._mirror

    def has_llm(self) -> bool:
        """Is an LLM endpoint configured (or started locally)? Asked before slow work that will need one."""
        return bool(llm_base_url(self.settings))

    def llm(self, max_calls: int | None = None) -> LLMClient | None:
        """A client of the configured (or local) LLM endpoint with its answer cache; None when there is none."""
        from openai import DefaultHttpxClient

        from newskg.core.llm.cache import LLMCache
        from newskg.core.llm.client import LLMClient, LLMOptions

        settings = self.settings
        base_url = llm_base_url(settings)
        if not base_url:
            return None
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
        cache = None
        if settings.llm_cache:
            cache = self.own(LLMCache(settings.data_dir / "llm" / "cache.sqlite"))
        http = self.own(DefaultHttpxClient())  # the SDK's own defaults, but closed by the bundle
        return LLMClient(
            base_url,
            settings.llm_model,
            key,
            cache=cache,
            options=LLMOptions(
                max_concurrency=settings.llm_max_concurrency,
                timeout_s=settings.llm_timeout_s,
                max_retries=settings.llm_max_retries,
                max_calls=max_calls,
                max_tokens=settings.llm_max_tokens,
                price_in_per_mtok=settings.llm_price_in_per_mtok,
                price_out_per_mtok=settings.llm_price_out_per_mtok,
            ),
            http_client=http,
        )

    def producer(self) -> RecordProducer:
        from newskg.ingest.kafka.producer import RecordProducer

        return self.own(RecordProducer(kafka_options(self.settings)))

    def consumer(self, group: str, stage: str, topics: list[str]) -> GroupConsumer:
        """A static member of `group` (ingest/kafka/membership.py): this replica's id, leased on this machine
        until the bundle closes (a clash fails fast, here)."""
        from newskg.ingest.kafka.consumer import GroupConsumer
        from newskg.ingest.kafka.membership import claim_member

        settings = self.settings
        member = claim_member(kafka_bootstrap(settings), group, stage, settings.instance_id)
        try:
            consumer = GroupConsumer(
                kafka_options(settings),
                group,
                topics,
                max_poll_records=settings.process_batch_size,
                member=member,
                max_poll_interval_ms=settings.kafka_max_poll_interval_s * 1000,
            )
        except BaseException:
            member.release()  # the consumer that would have released it does not exist
            raise
        return self.own(consumer)  # closing it releases the lease
