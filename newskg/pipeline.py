"""Wiring of the streaming stages: topics, consumers, producers and stage objects, built from settings."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from core.llm.cache import LLMCache
from core.llm.client import LLMClient
from core.settings import Settings
from extract.chunk_extractor import ChunkExtractor
from extract.entities.alias_index import ALWAYS, AliasIndex
from extract.entities.kb import load_kb
from extract.entities.linker import Linker
from extract.stage import ExtractOptions, ExtractRunner, ExtractStage
from graph.store.mentions import entities_first_seen
from graph.store.store import GraphStore
from ingest.kafka.admin import TopicAdmin
from ingest.kafka.consumer import GroupConsumer
from ingest.kafka.membership import claim_member
from ingest.kafka.producer import RecordProducer
from ingest.kafka.stage import StageRunner, run_stages
from ingest.process.dedup import DedupIndex
from ingest.process.signature_log import LOG_TOPIC_CONFIG, SignatureLog
from ingest.process.stage import ProcessStage
from newskg.wiring import NotConfigured, kafka_bootstrap, kafka_options, llm_base_url, open_graph, open_mirror

log = logging.getLogger(__name__)

STAGES = ("process", "extract")


def project_topics(settings: Settings) -> list[str]:
    return [settings.topic_articles, settings.topic_chunks, settings.topic_dlq, settings.topic_dedup]


def ensure_topics(settings: Settings) -> None:
    admin = TopicAdmin(kafka_options(settings))
    try:
        admin.ensure_topics(
            project_topics(settings),
            settings.topic_partitions,
            settings.topic_replication,
            configs={settings.topic_dedup: LOG_TOPIC_CONFIG},
        )
    finally:
        admin.close()


def articles_producer(settings: Settings) -> RecordProducer:
    """A producer for the source side, the project's topics created first (idempotent)."""
    ensure_topics(settings)
    return RecordProducer(kafka_options(settings))


def group_consumer(settings: Settings, group: str, stage: str, topics: list[str]) -> GroupConsumer:
    """A static member of `group` (ingest/kafka/membership.py): this replica's id, leased on this machine."""
    member = claim_member(kafka_bootstrap(settings), group, stage, settings.instance_id)
    return GroupConsumer(
        kafka_options(settings),
        group,
        topics,
        max_poll_records=settings.process_batch_size,
        member=member,
        max_poll_interval_ms=settings.kafka_max_poll_interval_s * 1000,
    )


def process_runner(settings: Settings) -> StageRunner:
    group = settings.consumer_group("process")
    consumer = group_consumer(settings, group, "process", [settings.topic_articles])  # a clash fails fast
    options = kafka_options(settings)
    producer = RecordProducer(options)
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm, settings.dedup_window_days)
    stage = ProcessStage(settings, index, SignatureLog(options, settings.topic_dedup, producer))
    return StageRunner(stage, consumer, producer, settings.topic_dlq)


def alias_index(settings: Settings, store: GraphStore) -> AliasIndex:
    """The linking target: a configured KB first, then every entity already in the graph, each with when it was
    first seen (its first mentioning chunk's day and ingestion), so linking stays as of the chunk."""
    index = AliasIndex()
    if settings.extract_kb_path:
        load_kb(settings.extract_kb_path, index)
    for row in entities_first_seen(store.conn):
        seen = ALWAYS if row["first_day"] is None else (row["first_day"], row["first_ingested_ms"])
        index.add(
            row["id"],
            row["name"],
            row["type"],
            aliases=row["aliases"] or [],
            mentions=row["mentions"],
            description=row["description"],
            seen=seen,
        )
    return index


def llm_client(settings: Settings, max_calls: int | None = None) -> LLMClient | None:
    base_url = llm_base_url(settings)
    if not base_url:
        return None
    key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else None
    cache = LLMCache(settings.data_dir / "llm" / "cache.sqlite") if settings.llm_cache else None
    return LLMClient(
        base_url,
        settings.llm_model,
        key,
        cache=cache,
        max_concurrency=settings.llm_max_concurrency,
        timeout_s=settings.llm_timeout_s,
        max_retries=settings.llm_max_retries,
        max_calls=max_calls,
        max_tokens=settings.llm_max_tokens,
        price_in_per_mtok=settings.llm_price_in_per_mtok,
        price_out_per_mtok=settings.llm_price_out_per_mtok,
    )


def extract_stage(
    settings: Settings, variant: str | None = None, max_calls: int | None = None, with_mirror: bool = True, mirror=None
) -> ExtractStage:
    """`mirror`: an already open mirror to share (serve --pipeline: local Qdrant admits one client)."""
    store = GraphStore(open_graph(settings))
    store.init()
    options = ExtractOptions(
        variant=variant or settings.extract_variant,
        subjects=settings.extract_subjects,
        top_n=settings.extract_top_n,
        window_days=settings.extract_window_days,
        m2_batch=settings.extract_m2_batch,
        m2_max_wait_s=settings.extract_m2_max_wait_s,
        m2_max_tries=settings.extract_m2_max_tries,
        chunks_topic=settings.topic_chunks,
    )
    llm = llm_client(settings, max_calls) if options.variant != "m0" else None
    lent = mirror is not None
    if mirror is None and with_mirror and settings.mirror_enabled:
        mirror = open_mirror(settings)
    stage = ExtractStage(store, ChunkExtractor(Linker(alias_index(settings, store))), options, llm, mirror)
    stage.owns_mirror = not lent
    return stage


def extract_runner(
    settings: Settings, variant: str | None = None, max_calls: int | None = None, mirror=None
) -> StageRunner:
    group = settings.consumer_group("extract")
    consumer = group_consumer(settings, group, "extract", [settings.topic_chunks])  # a clash fails fast
    stage = extract_stage(settings, variant, max_calls, mirror=mirror)
    return ExtractRunner(stage, consumer, RecordProducer(kafka_options(settings)), settings.topic_dlq)


def build_runners(
    settings: Settings, names: list[str], variant: str | None = None, max_calls: int | None = None, mirror=None
) -> list[StageRunner]:
    ensure_topics(settings)
    builders = {
        "process": lambda s: process_runner(s),
        "extract": lambda s: extract_runner(s, variant, max_calls, mirror),
    }
    return [builders[name](settings) for name in names]


def qa_service(settings: Settings, mirror=None):
    from qa.service import QAService

    store = GraphStore(open_graph(settings))
    store.init()
    llm = None if settings.qa_answerer == "extractive" else llm_client(settings)
    if settings.qa_answerer == "llm" and llm is None:
        raise NotConfigured("NEWSKG_QA_ANSWERER=llm but no LLM: set NEWSKG_LLM_BASE_URL or `services up --llm`")
    return QAService(store, mirror if mirror is not None else open_mirror(settings), llm, settings.qa_backoff_days)


class PipelineThread:
    """The stages in a thread beside the API (`serve --pipeline`). They run until `stop` is set; if they stop for
    any other reason (an exception, an infrastructure failure the stage does not absorb), `healthy()` turns false
    at once and `on_failure(reason)` is called, so the server can report 503 and exit non-zero instead of serving
    a graph that silently stopped growing."""

    def __init__(
        self,
        runners: list[StageRunner],
        stop: threading.Event,
        join_timeout_s: float,
        on_failure: Callable[[str], None],
    ):
        self.runners, self.stop, self.join_timeout_s, self.on_failure = runners, stop, join_timeout_s, on_failure
        self.failure: str | None = None
        self.thread = threading.Thread(target=self._run, name="stages", daemon=True)

    def start(self) -> PipelineThread:
        self.thread.start()
        return self

    def healthy(self) -> bool:
        return self.thread.is_alive() and self.failure is None

    def _run(self) -> None:
        try:
            run_stages(self.runners, False, self.stop, self.join_timeout_s)
        except BaseException as exc:  # whatever stopped the stages, the server must know
            log.exception("the pipeline stages stopped")
            self.failure = f"{type(exc).__name__}: {exc}"
        else:
            if not self.stop.is_set():
                self.failure = "the stages returned without being asked to stop"
        if self.failure:
            self.on_failure(self.failure)
