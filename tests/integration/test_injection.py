"""Cypher injection through article text, entity names and query strings, on the real pipeline and FalkorDB: the
hostile strings are stored and matched as data (parameters), and every node that was there before keeps its id
and properties; reads with hostile strings change nothing at all."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from newskg.pipeline import qa_service
from newskg.qa.api import create_app
from newskg.wiring import Wiring, open_graph
from tests.support.articles import STORIES, ingest_stories
from tests.support.cli import newskg_json

pytestmark = pytest.mark.integration

HOSTILE = [
    '"}) MATCH (n) DETACH DELETE n //',
    "'}) MATCH (n) DETACH DELETE n //",
    "x' OR 1=1 WITH 1 AS x MATCH (n) SET n.id = 'pwned' //",
    "`) DETACH DELETE n RETURN 1 //",
    "\\u0027}) CALL db.labels() YIELD label RETURN label //",
    "$id } ] ) ; MATCH (n) DELETE n",
]
# Names NER takes as a person and an organisation, none of them in STORIES: the hostile story touches no old node.
# One story of three sentences (one chunk): stories from one template would be near-duplicates, kept as sightings.
HOSTILE_STORY = (
    "Zed Quarrington of Northwind Holdings said {0} and then {1} at a press conference in Oslo on Monday. "
    "Zed Quarrington later told reporters {2} before adding {3}. "
    "Northwind Holdings declined to comment on {4} or on {5}."
)


def snapshot(settings) -> tuple[dict[str, object], int]:
    """Every node of the graph (`labels:id` -> properties) and the number of relationships."""
    with open_graph(settings) as conn:
        nodes = conn.read("MATCH (n) RETURN labels(n) AS l, n.id AS id, properties(n) AS p")
        rels = int(str(conn.read("MATCH ()-[r]->() RETURN count(r) AS c")[0]["c"]))
    return {f"{r['l']}:{r['id']}": r["p"] for r in nodes}, rels


@pytest.mark.timeout(900)  # two ingest-and-extract runs: minutes on a loaded 2-core machine
def test_hostile_text_names_and_queries_change_nothing_they_should_not(isolated, tmp_path):
    env, settings = isolated.env, isolated.settings
    ingest_stories(env, tmp_path, STORIES)
    newskg_json("run", "all", "--until-idle", env=env)
    before, rels_before = snapshot(settings)
    assert len(before) > 10

    ingest_stories(env, tmp_path, [("2023-06-01", "evil", HOSTILE_STORY.format(*HOSTILE))], name="hostile.jsonl")
    stages = newskg_json("run", "all", "--until-idle", env=env)["stages"]
    assert stages["process"]["dead"] == 0 and stages["extract"]["dead"] == 0
    after, rels_after = snapshot(settings)
    assert {key: after.get(key) for key in before} == before  # every old node: there, its properties unchanged
    assert len(after) > len(before) and rels_after > rels_before  # the hostile stories were written …
    with open_graph(settings) as conn:  # … verbatim, as data
        texts = " ".join(str(r["t"]) for r in conn.read("MATCH (c:Chunk) RETURN c.text AS t"))
    assert [h for h in HOSTILE if h not in texts] == []

    with Wiring(settings) as wiring:
        service = qa_service(wiring)
        client = TestClient(create_app(service, {"graph": service.store.conn.ping}, api_keys=[]))
        for hostile in HOSTILE:
            assert client.get("/v1/ask", params={"q": hostile, "date": "2023-06-05"}).status_code == 200
            assert client.get("/v1/entities", params={"search": hostile}).status_code == 200
            timeline = client.get(f"/v1/entities/{hostile}/timeline", params={"from": "2023-01-01", "to": "2023-12-31"})
            assert timeline.status_code == 404 and timeline.json()["reason"] == "not_found"
            assert service.store.find_entities(hostile) == []
    assert snapshot(settings) == (after, rels_after)  # reads with hostile strings changed nothing
