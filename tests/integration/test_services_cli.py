"""`newskg services` and the CLI shape, through the real command."""

import pytest

from tests.support.cli import newskg

pytestmark = pytest.mark.integration

GROUPS = ["services", "ingest", "run", "extract", "graph", "ask", "serve", "eval", "topics"]


def test_help_lists_every_group(stack):
    out = newskg("--help", env=stack.env).stdout
    for group in GROUPS:
        assert group in out
    for group in GROUPS:
        assert newskg(group, "--help", env=stack.env).returncode == 0


def test_status_reports_both_servers_healthy_and_up_is_idempotent(stack):
    before = stack.status()
    assert before["broker"]["healthy"] and before["graph"]["healthy"]
    assert before["broker"]["engine"] in ("noida", "tansu") and before["graph"]["engine"] == "falkordb"
    stack.up()
    after = stack.status()
    assert after["broker"]["pid"] == before["broker"]["pid"]
    assert after["graph"]["pid"] == before["graph"]["pid"]


def test_external_settings_start_nothing(tmp_path, stack):
    env = {
        **stack.env,
        "NEWSKG_DATA_DIR": str(tmp_path),
        "NEWSKG_KAFKA_BOOTSTRAP": stack.status()["broker"]["address"],
        "NEWSKG_GRAPH_URI": stack.status()["graph"]["address"],
    }
    up = newskg("services", "up", "--json", env=env)
    assert '"mode": "external"' in up.stdout
    assert (
        not (tmp_path / "services" / "state.json").exists()
        or "pid" not in (tmp_path / "services" / "state.json").read_text()
    )
    status = newskg("services", "status", "--json", env=env)
    assert status.returncode == 0  # the external servers are healthy


def test_topics_json_shape(stack):
    import json

    data = json.loads(newskg("topics", "--ensure", "--json", env=stack.env).stdout)
    names = {t["name"]: t for t in data["topics"]}
    assert {"news.articles", "news.chunks", "news.dlq"} <= set(names)
    assert set(names["news.articles"]) == {"name", "partitions", "messages", "lag"}
