"""The streaming stages and the QA service, built over a `Wiring` bundle that owns every client they use."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from newskg.core.settings import Settings
from newskg.core.variant import Variant
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.consumer import GroupConsumer
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.kafka.stage import StageRunner, run_stages
from newskg.wiring import Wiring, kafka_options

# The stages' own stacks (spaCy, which imports torch through thinc; trafilatura; MinHash) load only where a stage is
# built: the QA API and `newskg ask` never parse text, so they do not pay their import time or memory (issue 20).
if TYPE_CHECKING:
    from newskg.extract.entities.link_log import SharedLinking
    from newskg.extract.entities.linker import Linker
    from newskg.extract.stage import ExtractAck, ExtractOptions, ExtractStage
    from newskg.graph.store.store import GraphStore
    from newskg.ingest.process.stage import DedupLogEntries
    from newskg.qa.service import QAService

log = logging.getLogger(__name__)

STAGES = ("process", "extract")


def project_topics(settings: Settings) -> list[str]:
    return [settings.topic_articles, settings.topic_chunks, settings.topic_dlq, settings.topic_dedup]


def ensure_topics(settings: Settings) -> None:
    """The stream's topics with NEWSKG_TOPIC_PARTITIONS; the linking log with one partition (its entries stay in
    the order they were written: extract/entities/link_log.py). The two logs compacted."""
    from newskg.extract.entities.link_log import LOG_PARTITIONS
    from newskg.extract.entities.link_log import LOG_TOPIC_CONFIG as LINKING_CONFIG
    from newskg.ingest.process.signature_log import LOG_TOPIC_CONFIG

    admin = TopicAdmin(kafka_options(settings))
    try:
        admin.ensure_topics(
            project_topics(settings),
            settings.topic_partitions,
            settings.topic_replication,
            configs={settings.topic_dedup: LOG_TOPIC_CONFIG},
        )
        admin.ensure_topics(
            [settings.topic_linking],
            LOG_PARTITIONS,
            settings.topic_replication,
            configs={settings.topic_linking: LINKING_CONFIG},
        )
    finally:
        admin.close()


def articles_producer(wiring: Wiring) -> RecordProducer:
    """A producer for the source side, the project's topics created first (idempotent)."""
    ensure_topics(wiring.settings)
    return wiring.producer()


def group_consumer(wiring: Wiring, group: str, stage: str, topics: list[str]) -> GroupConsumer:
    """A static member of `group` (ingest/kafka/membership.py): this replica's id, leased on this machine."""
    return wiring.consumer(group, stage, topics)


def process_runner(wiring: Wiring) -> StageRunner[DedupLogEntries]:
    from newskg.extract.failures import outage
    from newskg.ingest.kafka.ingestion_order import IngestionOrder, Peeker
    from newskg.ingest.process.dedup import DedupIndex
    from newskg.ingest.process.signature_log import SignatureLog
    from newskg.ingest.process.stage import ProcessStage

    settings = wiring.settings
    group = settings.consumer_group("process")
    consumer = wiring.consumer(group, "process", [settings.topic_articles])  # a clash fails fast
    producer = wiring.producer()
    signature_log = wiring.own(SignatureLog(kafka_options(settings), settings.topic_dedup, producer))
    index = DedupIndex(settings.dedup_threshold, settings.dedup_num_perm, settings.dedup_window_days)
    stage = wiring.own(ProcessStage(settings, index, signature_log))
    # Always on: which near-duplicate is kept, and what the dedup window holds, read the order articles come in
    # (ingest/process/order.py); as polled, that was fetch timing.
    peeker = wiring.own(Peeker(kafka_options(settings), stage.order.key))
    order = IngestionOrder(consumer, peeker, stage.order.key, most=settings.process_batch_size)
    return StageRunner(stage, consumer, producer, settings.topic_dlq, outage, order)


def linker(settings: Settings, store: GraphStore) -> Linker:
    """The linker a stage starts with: a configured KB first, then the linking journals of every chunk written
    (extract/entities/journal.py: what the linker knew when it stopped, whole), then any entity of the graph no
    journal taught (a graph written before journals existed), each with when it was first seen, so linking stays
    as of the chunk."""
    from newskg.extract.entities.alias_index import ALWAYS, AliasIndex, Recorded
    from newskg.extract.entities.journal import replay_all
    from newskg.extract.entities.kb import load_kb
    from newskg.extract.entities.linker import Linker
    from newskg.graph.store.mentions import entities_first_seen

    index = AliasIndex()
    if settings.extract_kb_path:
        load_kb(settings.extract_kb_path, index)
    linked = Linker(index)
    replayed = replay_all(linked, store.conn)
    for row in entities_first_seen(store.conn):
        if replayed and row.id in index.entities:
            continue
        seen = (
            ALWAYS if row.first_day is None or row.first_ingested_ms is None else (row.first_day, row.first_ingested_ms)
        )
        recorded = Recorded(aliases=row.aliases or [], mentions=row.mentions, description=row.description)
        index.add(row.id, row.name, row.type, seen=seen, recorded=recorded)
    return linked


def extract_options(settings: Settings, variant: Variant | None = None) -> ExtractOptions:
    from newskg.extract.stage import ExtractOptions

    return ExtractOptions(
        variant=variant or settings.extract_variant,
        subjects=settings.extract_subjects,
        top_n=settings.extract_top_n,
        window_days=settings.extract_window_days,
        m2_batch=settings.extract_m2_batch,
        m2_max_wait_s=settings.extract_m2_max_wait_s,
        m2_max_tries=settings.extract_m2_max_tries,
        chunks_topic=settings.topic_chunks,
        dedup_topic=settings.topic_dedup,
    )


def extract_stage(
    wiring: Wiring,
    variant: Variant | None = None,
    max_calls: int | None = None,
    with_mirror: bool = True,
    link_log: SharedLinking | None = None,
) -> ExtractStage:
    """The extract stage over the bundle's clients; the mirror is the bundle's one (serve --pipeline shares it
    with the QA service: local Qdrant admits one client). `link_log`: the replicas' shared linking log, opened
    before this replays the graph's journals (extract/entities/link_log.py)."""
    from newskg.extract.chunk_extractor import ChunkExtractor
    from newskg.extract.stage import ExtractStage

    settings = wiring.settings
    store = wiring.store()
    options = extract_options(settings, variant)
    llm = wiring.llm(max_calls) if options.variant.needs_llm else None
    mirror = wiring.mirror() if with_mirror and settings.mirror_enabled else None
    return wiring.own(
        ExtractStage(
            store,
            ChunkExtractor(
                linker(settings, store), settings.extract_m0_rules == "strict", settings.extract_min_confidence
            ),
            options,
            llm,
            mirror,
            link_log,
        )
    )


def extract_runner(
    wiring: Wiring, variant: Variant | None = None, max_calls: int | None = None
) -> StageRunner[ExtractAck]:
    from newskg.extract.failures import outage
    from newskg.extract.stage import ExtractRunner

    settings = wiring.settings
    group = settings.consumer_group("extract")
    from newskg.extract.entities.link_log import LinkLog

    consumer = wiring.consumer(group, "extract", [settings.topic_chunks])  # a clash fails fast
    link_log = wiring.own(LinkLog(kafka_options(settings), settings.topic_linking))  # before the graph's journals
    stage = extract_stage(wiring, variant, max_calls, link_log=link_log)
    order = None
    if settings.extract_ingestion_order:
        from newskg.ingest.kafka.ingestion_order import IngestionOrder, Peeker

        order = IngestionOrder(consumer, wiring.own(Peeker(kafka_options(settings))), most=settings.process_batch_size)
    return ExtractRunner(stage, consumer, wiring.producer(), settings.topic_dlq, outage, order)


def build_runners(
    wiring: Wiring, names: list[str], variant: Variant | None = None, max_calls: int | None = None
) -> list[StageRunner[Any]]:
    """The named stages' runners; every client they use belongs to `wiring` and closes with it."""
    ensure_topics(wiring.settings)
    builders: dict[str, Callable[[], StageRunner[Any]]] = {  # each stage its own ack type
        "process": lambda: process_runner(wiring),
        "extract": lambda: extract_runner(wiring, variant, max_calls),
    }
    return [builders[name]() for name in names]


def qa_service(wiring: Wiring) -> QAService:
    """The QA service of the bundle (`Wiring.qa_service`), under the name the servers and benches know."""
    return wiring.qa_service()


def qa_checks(service: QAService) -> dict[str, Callable[[], bool]]:
    """The readiness checks of a QA service's own dependencies, in /readyz's order: the graph, then the mirror when
    it has one (`newskg serve` adds the broker before them and the stages after; the QA bench serves these alone)."""
    checks: dict[str, Callable[[], bool]] = {"graph": service.store.conn.ping}
    if (mirror := service.mirror) is not None:
        checks["mirror"] = lambda: mirror.count("interactions") >= 0
    return checks


class PipelineThread:
    """The stages in a thread beside the API (`serve --pipeline`). They run until `stop` is set; if they stop for
    any other reason (an exception, an infrastructure failure the stage does not absorb), `healthy()` turns false
    at once and `on_failure(reason)` is called, so the server can report 503 and exit non-zero instead of serving
    a graph that silently stopped growing."""

    def __init__(
        self,
        runners: list[StageRunner[Any]],
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
