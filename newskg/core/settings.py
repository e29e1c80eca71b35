"""All configuration, read from `NEWSKG_*` environment variables and an optional `.env` file.

A setting left empty means "use the local server that `newskg services up` started"; a setting given
points the same code at an external (production) server and nothing is started locally.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from newskg.core.variant import Variant


class Settings(BaseSettings):
    # Errors name the setting and the rule, never the value: the settings hold API keys and passwords, and a
    # refused key list would otherwise be printed whole into a pod's log.
    model_config = SettingsConfigDict(
        env_prefix="NEWSKG_", env_file=".env", env_file_encoding="utf-8", extra="ignore", hide_input_in_errors=True
    )

    # --- where local state lives (service pids/ports, qdrant local storage, caches, reports)
    data_dir: Path = Field(default=Path(".newskg"), description="Folder for local server data, state and caches.")

    # --- Kafka
    kafka_bootstrap: str | None = Field(
        default=None, description="Kafka bootstrap servers (host:port,...). Empty: the local broker."
    )
    local_broker: Literal["noida", "tansu"] = Field(
        default="noida", description="Local Kafka-protocol broker that `services up` starts (noida keeps data)."
    )
    kafka_security_protocol: str = Field(default="PLAINTEXT", description="PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL.")
    kafka_sasl_mechanism: str | None = Field(default=None, description="e.g. PLAIN or SCRAM-SHA-512.")
    kafka_sasl_username: str | None = Field(default=None, description="SASL user name.")
    kafka_sasl_password: SecretStr | None = Field(default=None, description="SASL password.")
    kafka_ssl_cafile: Path | None = Field(
        default=None,
        description="CA certificate (PEM) that signs the brokers' certificates, for SSL and SASL_SSL (e.g. "
        "Strimzi's cluster CA). Empty: the system's trusted CAs.",
    )
    instance_id: str | None = Field(
        default=None,
        description="This replica's stable name in the consumer groups (static membership): each stage "
        "joins as INSTANCE-STAGE, and a restart with the same name takes its partitions back at once. Empty: the "
        "host name (a second local process of a stage gets HOST.2, ...). In k8s: the StatefulSet pod name.",
    )
    group_prefix: str = Field(
        default="newskg",
        pattern=r"^[A-Za-z0-9._-]+$",
        description="Prefix of the stages' consumer groups (PREFIX-process, PREFIX-extract). Another prefix "
        "makes a separate set of groups on the same broker (a second deployment, a test).",
    )
    kafka_max_poll_interval_s: int = Field(
        default=180,
        ge=10,
        description="Longest a stage may spend on one polled batch before the group hands its "
        "partitions (and the batch) to another member; also how long a rebalance waits for members.",
    )
    kafka_join_timeout_s: float = Field(
        default=60.0,
        gt=0,
        description="How long `run --until-idle` waits for its partitions before it exits non-zero "
        "naming the group and the broker; long-running stages log a warning and keep waiting.",
    )
    topic_articles: str = Field(default="news.articles", description="Topic of raw articles.")
    topic_chunks: str = Field(default="news.chunks", description="Topic of deduplicated chunks.")
    topic_dlq: str = Field(default="news.dlq", description="Dead-letter topic.")
    topic_dedup: str = Field(
        default="news.dedup",
        description="Log of kept chunks' MinHash signatures: the dedup state every replica shares.",
    )
    topic_linking: str = Field(
        default="news.linking",
        description="Log of the linking journals of chunks written to the graph: the alias index every extract "
        "replica shares (compacted, one partition).",
    )
    topic_partitions: int = Field(default=3, ge=1, description="Partitions when newskg creates a topic.")
    topic_replication: int = Field(default=1, ge=1, description="Replication factor when newskg creates a topic.")

    # --- ingestion and the process stage
    chunk_sentences: int = Field(default=5, ge=1, description="Sentences per chunk (m; NEON uses 5-6).")
    chunk_stride: int = Field(default=3, ge=1, description="Sentences between chunk starts (stride s; m - s overlap).")
    dedup_threshold: float = Field(
        default=0.7, gt=0.0, le=1.0, description="Word-trigram Jaccard at or above which a chunk is a near-duplicate."
    )
    dedup_num_perm: int = Field(default=128, ge=16, le=1024, description="MinHash permutations.")
    dedup_window_days: int = Field(
        default=30,
        ge=1,
        description="Days of chunks (by publication, back from the newest seen) the dedup index keeps; "
        "older ones are neither matched nor replayed from the dedup log.",
    )
    max_page_bytes: int = Field(
        default=5_000_000, ge=1024, description="Larger pages/messages go to the dead-letter topic."
    )
    process_batch_size: int = Field(default=64, ge=1, description="Messages a stage takes per poll.")
    fetch_timeout_s: float = Field(default=20.0, gt=0, description="HTTP timeout for feeds and pages.")
    fetch_min_interval_s: float = Field(
        default=1.0, ge=0, description="Minimum seconds between requests to one domain."
    )
    fetch_user_agent: str = Field(
        default="newskg/0.1 (+https://github.com/newskg)", description="User-Agent for fetching."
    )
    fetch_allow_private: bool = Field(
        default=False,
        description="Fetch private, loopback, link-local and reserved addresses (local test servers only).",
    )
    fetch_max_redirects: int = Field(default=5, ge=0, le=20, description="Redirect hops followed per fetch.")

    # --- graph store
    graph_uri: str | None = Field(
        default=None,
        description="falkordb://host:port, bolt://, neo4j:// or neo4j+s:// URI. Empty: the local FalkorDB.",
    )
    graph_user: str | None = Field(default=None, description="Graph server user (Neo4j).")
    graph_password: SecretStr | None = Field(default=None, description="Graph server password.")
    graph_database: str | None = Field(
        default=None,
        description="Neo4j database (default: the server's home database) / FalkorDB graph (default: newskg).",
    )

    # --- vector mirror
    qdrant_url: str | None = Field(
        default=None, description="Qdrant server URL (qdrant-client). Empty: the embedded mirror under qdrant_path."
    )
    qdrant_path: Path | None = Field(
        default=None,
        description="Folder of the embedded mirror (default data_dir/qdrant): Qdrant Edge shards, or qdrant-client "
        "local mode's storage. One process opens it at a time.",
    )
    qdrant_api_key: SecretStr | None = Field(default=None, description="Qdrant server API key.")
    mirror_engine: Literal["edge", "qdrant-local"] = Field(
        default="edge",
        description="The embedded mirror when qdrant_url is empty: edge: Qdrant Edge in process (payload indexes, an "
        "int8 copy of the vectors scanned and rescored); qdrant-local: qdrant-client local mode (filters in Python, "
        "for comparison).",
    )
    mirror_index_after: int = Field(
        default=20_000,
        ge=1,
        description="Qdrant Edge: unoptimized points after which a write optimizes the shard (its int8 copy of the "
        "vectors and payload indexes; blocks the process); fewer are scanned by their float32 vectors.",
    )

    # --- LLM (any OpenAI-compatible endpoint)
    llm_base_url: str | None = Field(
        default=None, description="OpenAI-compatible base URL. Empty: the local llama.cpp server if started, else none."
    )
    llm_model: str = Field(default="smollm2", description="Model name sent to the endpoint.")
    llm_api_key: SecretStr | None = Field(default=None, description="API key for the endpoint.")
    llm_max_concurrency: int = Field(default=4, ge=1, description="LLM calls in flight at once.")
    llm_timeout_s: float = Field(default=120.0, gt=0, description="Timeout of one LLM call.")
    llm_max_tokens: int = Field(default=512, ge=16, description="Upper bound on tokens one LLM answer may take.")
    llm_max_retries: int = Field(default=4, ge=0, description="Retries on 429, 5xx and timeouts (exponential backoff).")
    llm_cache: bool = Field(
        default=True, description="Cache LLM responses under data_dir/llm (model, prompt version, hash)."
    )
    llm_price_in_per_mtok: float = Field(
        default=0.0, ge=0, description="USD per million prompt tokens (cost accounting)."
    )
    llm_price_out_per_mtok: float = Field(default=0.0, ge=0, description="USD per million completion tokens.")

    # --- extraction
    extract_variant: Annotated[Variant, BeforeValidator(Variant.parse)] = Field(
        default=Variant.M0, description="Open-IE variant of the extract stage: m0, m1 or m2 (either case)."
    )
    extract_subjects: list[str] = Field(
        default=[], description="Target subject names (JSON list). Empty: the top-N entities by mention TF-IDF."
    )
    extract_top_n: int = Field(
        default=50, ge=1, description="Target subjects picked by TF-IDF when none are configured."
    )
    extract_window_days: int = Field(default=7, ge=1, description="Window of the TF-IDF subject selection, in days.")
    extract_m2_batch: int = Field(default=5, ge=1, description="k: chunks per M2 prompt.")
    extract_m2_max_wait_s: float = Field(
        default=600.0,
        gt=0,
        description="A pair's M2 remainder (fewer than k chunks) goes out once its oldest chunk has "
        "waited this long, in wall-clock seconds since the extract stage first saw it "
        "pending (since the stage started, after a restart); batch runs also flush at idle.",
    )
    extract_m2_max_tries: int = Field(
        default=3,
        ge=1,
        description="Tries of an M2 batch whose answer does not parse before it is dead-lettered (m2_batch_failed).",
    )
    extract_m0_rules: Literal["wide", "strict"] = Field(
        default="wide",
        description="M0's rules: strict also drops clauses a reader cannot take on their own (a cut name as "
        "subject, the writer's or reader's voice, a dangling end, a speech verb without what was said, an entity "
        "only named in passing): more precise facts, fewer of them, lower replay recall (evaluation/facts).",
    )
    extract_min_confidence: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="An M0 fact whose confidence (extract/openie/confidence.py: the fitted chance a reader finds it "
        "clean) is below this is not written. 0 writes every fact and leaves the choice to readers (the API, export "
        "and explorer show each fact's confidence); bench/fit_confidence.py prints precision and recall per threshold.",
    )
    extract_ingestion_order: bool = Field(
        default=True,
        description="Hand the extract stage its chunks in ingestion order across the partitions it holds (holding "
        "back those ingested after the head of a lagging partition), so how partitions interleave cannot change "
        "what the alias index learns first (ingest/kafka/ingestion_order.py). Off: as polled.",
    )
    extract_kb_path: Path | None = Field(
        default=None, description="Optional KB (JSONL: id, name, aliases, type, description)."
    )

    # --- embeddings
    embedding_backend: Literal["minilm", "openai"] = Field(
        default="minilm", description="minilm: local all-MiniLM-L6-v2 on CPU; openai: the embeddings endpoint."
    )
    embed_backend: Literal["onnx", "torch"] = Field(
        default="onnx",
        description="How the local MiniLM runs: onnx: ONNX Runtime on the model exported at `make setup` (cached under "
        "the data dir, exported on first use if missing); torch: sentence-transformers, the reference.",
    )
    embed_threads: int | None = Field(
        default=None,
        ge=1,
        description="ONNX Runtime intra-op threads for the local MiniLM. Empty: the CPU count. The QA API process "
        "uses NEWSKG_API_EMBED_THREADS instead.",
    )
    api_embed_threads: int = Field(
        default=1,
        ge=1,
        description="ONNX Runtime intra-op threads for the local MiniLM in the QA API process (`newskg serve`, its "
        "--pipeline stages included): each request thread embeds its one query, and one intra-op thread costs a "
        "query ~20% less CPU than two (2.65 against 3.3 ms on 2 cores).",
    )
    embed_cache_size: int = Field(
        default=8192,
        ge=0,
        description="Distinct texts whose vectors a process remembers, each embedded once (overlapping chunks "
        "repeat their interaction texts; ~3 KB each with the local MiniLM, 8 bytes a dimension). 0: none.",
    )
    mirror_enabled: bool = Field(default=True, description="Mirror interactions and chunks into Qdrant from the stage.")
    embedding_model: str = Field(
        default="text-embedding-3-small", description="Embedding model name when embedding_backend=openai."
    )

    # --- QA and the HTTP API
    qa_answerer: Literal["auto", "llm", "extractive"] = Field(
        default="auto", description="auto: the LLM when one is configured or running locally, else extractive."
    )
    qa_backoff_days: int = Field(
        default=7, ge=0, le=365, description="Temporal retrieval widens ±1..r days up to this."
    )
    # --- NEON evaluation (spike days and replay)
    neon_spike_window: int = Field(default=3, ge=1, le=60, description="Days in the spike rule's trailing rolling sum.")
    neon_spike_sigma: float = Field(
        default=1.0, ge=0, description="A spike day's rolling sum must be strictly above mean + this many sample σ."
    )
    neon_min_users: int = Field(
        default=5,
        ge=1,
        description="Privacy rule: queries issued by fewer distinct users are dropped (logs with user ids).",
    )
    explore_spikes_file: Path | None = Field(
        default=None,
        description="The NEON evaluation's spike days for the explorer's timeline: `newskg eval spikes` writes "
        "<out>/spikes.json, `newskg eval replay` <out>/report.json. Empty: data_dir/eval/spikes/spikes.json. An entity "
        "the file lacks, or no file: the rolling-sum rule computed from the graph.",
    )
    api_host: str = Field(default="127.0.0.1", description="Address `newskg serve` listens on.")
    api_port: int = Field(default=8000, ge=1, le=65535, description="Port `newskg serve` listens on.")
    api_keys: list[str] = Field(default=[], description="Accepted API keys (JSON list); empty: no authentication.")
    api_metrics_port: int | None = Field(
        default=None,
        ge=1,
        le=65535,
        description="Also serve Prometheus metrics without an API key on this port (on the API's address), so a "
        "scraper needs no secret; /metrics on the API port stays behind the key. Empty: no metrics port.",
    )
    api_max_query_chars: int = Field(default=300, ge=10, description="Longest query the API accepts.")
    api_threads: int = Field(
        default=4,
        ge=1,
        le=64,
        description="Threads per API process for graph/LLM calls; further requests queue first-in first-out.",
    )

    log_level: str = Field(default="INFO", description="Python log level.")

    @field_validator("api_keys")
    @classmethod
    def _keys_can_be_offered(cls, keys: list[str]) -> list[str]:
        refused = unusable_api_keys(keys)
        if refused:
            raise ValueError(f"NEWSKG_API_KEYS: {refused}")
        return keys

    def consumer_group(self, stage: str) -> str:
        """The consumer group a stage joins: PREFIX-STAGE (newskg-process, newskg-extract by default)."""
        return f"{self.group_prefix}-{stage}"

    @property
    def services_dir(self) -> Path:
        return self.data_dir / "services"

    @property
    def explore_spikes_path(self) -> Path:
        return self.explore_spikes_file or self.data_dir / "eval" / "spikes" / "spikes.json"

    @property
    def qdrant_local_path(self) -> Path:
        return self.qdrant_path or self.data_dir / "qdrant"


def unusable_api_keys(keys: list[str]) -> str | None:
    """Why these API keys cannot be configured, or None. An empty key matches a request that offers none (the
    gate reads a missing header as ""), so it would open the API to everyone (review finding: NEWSKG_API_KEYS
    '[""]' or '["a","","b"]'); a key with surrounding white space never matches a Bearer token, which is stripped."""
    positions = [str(i) for i, key in enumerate(keys) if not key.strip()]
    if positions:
        return f"key {', '.join(positions)} is empty or white space: it would match a request without a key"
    padded = [str(i) for i, key in enumerate(keys) if key != key.strip()]
    if padded:
        return f"key {', '.join(padded)} has leading or trailing white space: a Bearer token never matches it"
    return None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
