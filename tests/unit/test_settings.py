from pathlib import Path

import pytest
from pydantic import ValidationError

from newskg.core.settings import Settings
from newskg.services.manager import ServiceManager


def test_env_prefix_and_defaults(monkeypatch, tmp_path):
    monkeypatch.setenv("NEWSKG_KAFKA_BOOTSTRAP", "kafka-1:9092,kafka-2:9092")
    monkeypatch.setenv("NEWSKG_TOPIC_PARTITIONS", "12")
    s = Settings(_env_file=None)
    assert s.kafka_bootstrap == "kafka-1:9092,kafka-2:9092"
    assert s.topic_partitions == 12
    assert s.data_dir == Path(".newskg")
    assert s.topic_articles == "news.articles"


def test_consumer_groups_keep_their_names_and_take_a_prefix(monkeypatch):
    default = Settings(_env_file=None)
    assert (default.consumer_group("process"), default.consumer_group("extract")) == (
        "newskg-process",
        "newskg-extract",
    )
    monkeypatch.setenv("NEWSKG_GROUP_PREFIX", "t0123abcd")
    assert Settings(_env_file=None).consumer_group("extract") == "t0123abcd-extract"
    monkeypatch.setenv("NEWSKG_GROUP_PREFIX", "no spaces/slashes")  # Kafka refuses them in group ids
    with pytest.raises(ValidationError):
        Settings(_env_file=None)


def test_dotenv_file_is_read(tmp_path, monkeypatch):
    env = tmp_path / ".env"
    env.write_text("NEWSKG_GRAPH_URI=neo4j+s://abc.databases.neo4j.io\nNEWSKG_GRAPH_PASSWORD=s3cret\n")
    s = Settings(_env_file=env)
    assert s.graph_uri.startswith("neo4j+s://")
    assert s.graph_password.get_secret_value() == "s3cret"
    assert "s3cret" not in repr(s)


def test_external_servers_are_never_started(tmp_path):
    local = ServiceManager(Settings(data_dir=tmp_path, _env_file=None))
    assert {s.name for s in local.specs(llm=True)} == {"broker", "graph", "llm"}
    external = ServiceManager(
        Settings(
            data_dir=tmp_path,
            kafka_bootstrap="k:9092",
            graph_uri="bolt://n:7687",
            llm_base_url="https://api.example/v1",
            _env_file=None,
        )
    )
    assert external.specs(llm=True) == []


# Every setting documented: the docs site's configuration reference is generated from Settings, and
# tests/unit/test_references.py::test_every_setting_is_documented_on_the_docs_site checks each row.


def test_neo4j_ddl_is_idempotent_and_covers_every_key():
    from newskg.graph.store.schema import KEYED_LABELS, falkordb_ddl, neo4j_ddl

    ddl = neo4j_ddl()
    assert all("IF NOT EXISTS" in statement for statement in ddl)
    for label in KEYED_LABELS:
        assert f"FOR (n:{label}) REQUIRE n.id IS UNIQUE" in " ".join(ddl)
    assert "CREATE RANGE INDEX interaction_event_day IF NOT EXISTS FOR (n:Interaction) ON (n.event_day)" in ddl
    assert not any("IF NOT EXISTS" in s or "CONSTRAINT" in s for s in falkordb_ddl())


def test_the_api_process_embeds_with_its_own_intra_op_threads():
    """Issue 30: `newskg serve` (and the QA bench's API) runs its embedder with NEWSKG_API_EMBED_THREADS (1 by
    default: each request thread embeds its one query), whatever NEWSKG_EMBED_THREADS gives the other processes."""
    from newskg.wiring import api_settings

    settings = Settings(embed_threads=2, _env_file=None)  # pyright: ignore[reportCallIssue]
    assert api_settings(settings).embed_threads == 1
    assert api_settings(settings.model_copy(update={"api_embed_threads": 3})).embed_threads == 3
    assert settings.embed_threads == 2  # the other processes' setting is left as it was
