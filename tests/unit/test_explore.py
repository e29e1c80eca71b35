"""The explorer without servers: its page and scripts are served without a key while its data needs one, its
endpoints are in the OpenAPI schema and validate their input (4xx before any graph read), the GraphML export,
and the one spike rule shared with the NEON evaluation."""

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from newskg.core import spikes as core_spikes
from newskg.core.settings import Settings
from newskg.evaluation.neon import spikes as neon_spikes
from newskg.qa import explore
from newskg.qa.api import create_app
from newskg.qa.explore import PAGE_PATHS, SpikeFile, View, graphml, read_neon_spikes, with_spike_source

KEY = {"X-API-Key": "k"}
LIBRARY = "/*! cytoscape stand-in */ window.cytoscape = function () {};"


@pytest.fixture
def client():
    return TestClient(create_app(None, {}, api_keys=["k"]))  # no route used here reaches the service


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A checkout of its own (tmp_path) with no node_modules and no vendored copy: tests add what they need."""
    monkeypatch.setattr(explore, "REPO", tmp_path / "repo")
    monkeypatch.setattr(explore, "VENDOR_DIR", tmp_path / "vendor")
    return tmp_path


def install(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "cytoscape.min.js").write_text(LIBRARY)
    return folder / "cytoscape.min.js"


@pytest.fixture
def node_modules(checkout):
    """`npm ci` has run: node_modules/cytoscape/dist/cytoscape.min.js is in the checkout."""
    return install(checkout / "repo" / "node_modules" / "cytoscape" / "dist")


def test_the_graph_library_is_served_from_node_modules(client, node_modules):
    response = client.get("/explore/cytoscape.min.js")  # no key: the page loads it before the user types one
    assert response.status_code == 200 and response.text == LIBRARY
    assert response.headers["content-type"].startswith("text/javascript")


def test_the_image_serves_its_vendored_copy(client, checkout):
    install(checkout / "vendor")  # k8s/Dockerfile: no node_modules beside an installed package
    assert client.get("/explore/cytoscape.min.js").text == LIBRARY
    assert client.get("/explore").status_code == 200


def test_without_the_graph_library_the_page_says_what_to_run(client, checkout):
    page = client.get("/explore")
    assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
    assert "make explore" in page.text and "make setup" in page.text and "<script" not in page.text
    missing = client.get("/explore/cytoscape.min.js")
    assert missing.status_code == 404 and "make explore" in missing.json()["detail"]
    assert client.get("/explore/explore.js").status_code == 200  # the page's own files do not depend on npm


def test_the_page_is_open_and_the_data_needs_the_key(client, node_modules):
    page = client.get("/explore")
    assert page.status_code == 200 and "cytoscape.min.js" in page.text
    assert client.get("/explore/explore.js").status_code == 200
    assert client.get("/explore/explore.css").headers["content-type"].startswith("text/css")
    assert client.get("/v1/explore/search", params={"q": "ada"}).status_code == 401
    assert client.get("/explore/../qa/api.py").status_code in (401, 404)  # no file outside the fixed set
    assert {"/explore", "/explore/explore.js", "/explore/explore.css", "/explore/cytoscape.min.js"} == PAGE_PATHS


def test_the_endpoints_are_in_the_openapi_schema(client):
    paths = client.get("/openapi.json", headers=KEY).json()["paths"]
    assert {
        "/v1/explore/days",
        "/v1/explore/search",
        "/v1/explore/entities/{entity_id}/neighbourhood",
        "/v1/explore/entities/{entity_id}/timeline",
        "/v1/explore/interactions/{interaction_id}/evidence",
        "/v1/explore/cypher",
        "/v1/explore/export",
    } <= set(paths)
    assert "/explore" not in paths


@pytest.mark.parametrize(
    ("method", "path", "params"),
    [
        ("get", "/v1/explore/search", {"q": "ada", "as_of": "22-05-2023"}),
        ("get", "/v1/explore/search", {"q": "ada", "limit": 0}),
        ("get", "/v1/explore/entities/e1/neighbourhood", {"variant": "M3"}),
        ("get", "/v1/explore/entities/e1/neighbourhood", {"type": "org"}),
        ("get", "/v1/explore/entities/e1/timeline", {"window": 0}),
        ("get", "/v1/explore/export", {"entity": "e1", "format": "xml"}),
        ("post", "/v1/explore/cypher", None),
    ],
)
def test_bad_input_is_a_422_before_any_read(client, method, path, params):
    response = client.request(method, path, params=params, headers=KEY)
    assert response.status_code == 422, response.text


def test_graphml_has_the_nodes_and_the_drawn_edges():
    view = View(
        {"a": {"id": "a", "name": "Ada", "type": "PERSON", "mentions": 3}, "b": {"id": "b", "name": "Bab <&>"}},
        {
            "x": {"id": "x", "source": "a", "target": "b", "text": "met", "day": "2023-05-01", "n_sources": 2},
            "y": {"id": "y", "source": "a", "target": None, "text": "spoke", "day": "2023-05-02", "n_sources": 1},
        },
    )
    root = ET.fromstring(graphml(view))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert [n.get("id") for n in root.findall(".//g:node", ns)] == ["a", "b"]
    [edge] = root.findall(".//g:edge", ns)  # a fact with no object is not an edge
    assert (edge.get("source"), edge.get("target")) == ("a", "b")
    assert {d.get("key"): d.text for d in edge.findall("g:data", ns)} == {
        "text": "met",
        "day": "2023-05-01",
        "n_sources": "2",
    }
    name = root.find(".//g:node[@id='b']/g:data[@key='name']", ns)
    assert name is not None and name.text == "Bab <&>"


def test_the_evaluation_uses_the_one_spike_rule():
    assert neon_spikes.detect is core_spikes.detect
    assert neon_spikes.SpikeRule is core_spikes.SpikeRule


def test_both_neon_spike_files_are_read(tmp_path):
    """`newskg eval spikes` writes ISO days under `entities`; a replay's report.json day keys under `spikes`."""
    spikes = tmp_path / "spikes.json"
    spikes.write_text(
        json.dumps({"origin": "news mentions", "entities": [{"entity_id": "e1", "spike_days": ["2023-05-04"]}]})
    )
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"runs": [], "spikes": [{"entity_id": "e2", "spike_days": [20230505], "series": []}]}))
    assert read_neon_spikes(spikes).days == {"e1": frozenset({20230504})}
    assert read_neon_spikes(spikes).origin == "news mentions"
    assert read_neon_spikes(report).days == {"e2": frozenset({20230505})}
    with pytest.raises(ValueError):
        report.write_text(json.dumps({"spikes": [{"spike_days": [1]}]}))  # no entity id
        read_neon_spikes(report)


def test_the_spike_file_is_used_only_when_there_and_only_within_the_period(tmp_path):
    path = tmp_path / "spikes.json"
    source = SpikeFile(path)
    body: dict[str, object] = {"spike_days": [20230502]}
    with_spike_source(body, [20230501, 20230502, 20230503], source.current(), "e1")
    assert body == {"spike_days": [20230502], "spike_source": "rule"}
    path.write_text(
        json.dumps({"entities": [{"entity_id": "e1", "spike_days": ["2023-04-30", "2023-05-03", "2023-05-04"]}]})
    )
    body = {"spike_days": [20230502], "threshold": 2.5}
    with_spike_source(body, [20230501, 20230502, 20230503], source.current(), "e1")
    assert body["spike_days"] == [20230503] and body["spike_source"] == "neon" and body["threshold"] is None


def test_serve_looks_for_the_spike_file_where_eval_spikes_writes_it(tmp_path):
    settings = Settings(_env_file=None, data_dir=tmp_path)  # pyright: ignore[reportCallIssue]  # pydantic-settings
    assert settings.explore_spikes_path == tmp_path / "eval" / "spikes" / "spikes.json"
    chosen = Settings(_env_file=None, explore_spikes_file=tmp_path / "r.json")  # pyright: ignore[reportCallIssue]
    assert chosen.explore_spikes_path == tmp_path / "r.json"
