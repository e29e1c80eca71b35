"""QA on the real servers: entity resolution, the four strategies as of the query day, answers with evidence,
the HTTP API's validation, auth and metrics, and the always-current endpoint with the pipeline hosted."""

import os
import signal
from dataclasses import replace

import httpx
import pytest
from fastapi.testclient import TestClient

from newskg.pipeline import qa_service
from newskg.qa.answer import extractive
from newskg.qa.api import create_app
from newskg.qa.query import parse_query
from newskg.services.process import free_port
from newskg.wiring import Wiring
from tests.support.articles import STORIES, ingest_stories
from tests.support.cli import newskg_json
from tests.support.isolation import Isolation
from tests.support.processes import evidence, serve_process, wait_for

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def qa_world(stack, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("qa")
    with Isolation(stack, tmp_path) as isolation:
        isolated = isolation.new()
        env, settings = isolated.env, isolated.settings
        ingest_stories(env, tmp_path, STORIES)
        newskg_json("run", "all", "--until-idle", env=env)
        with Wiring(settings) as wiring:  # closes the service's graph connection and mirror
            service = qa_service(wiring)
            yield env, settings, service


@pytest.mark.parametrize("strategy", ["temporal", "generic", "hybrid", "newsrag"])
def test_every_strategy_answers_as_of_the_day(qa_world, strategy):
    _, _, service = qa_world
    result = service.ask("doja cat news", "2023-05-02", k=5, strategy=strategy).as_dict()
    assert result["entity"]["name"] == "Doja Cat"
    assert result["reformulated"] == "(Date: May 2, 2023) Doja Cat"
    assert result["evidence"], result
    assert all(e["published_day"] <= 20230502 for e in result["evidence"])  # nothing from the future
    assert not any("Paris" in e["text"] for e in result["evidence"])
    assert result["answer_mode"] == "extractive" and result["answer"].startswith("Extractive answer")
    if strategy != "generic":
        assert all(e["sources"] for e in result["evidence"])


@pytest.mark.parametrize("strategy", ["temporal", "generic", "hybrid", "newsrag"])
def test_the_answer_reusing_retrievals_similarities_picks_the_sentences_embedding_them_picked(qa_world, strategy):
    """Issue 30: the extractive answer scores a one-sentence evidence (an interaction) by retrieval's cosine of
    the mirror's vector of it instead of embedding it per request (chunks' sentences are still embedded): on the
    ingested stories the sentences chosen, and their order, are those embedding every sentence chose."""
    _, _, service = qa_world
    for question in ("doja cat news", "doja cat tour", "Doja Cat"):
        result = service.ask(question, "2023-05-02", k=5, strategy=strategy)
        texts = parse_query(question, "2023-05-02", service.resolver).texts
        embedded_per_request = [replace(e, similarity=None) for e in result.evidence]
        assert result.evidence and result.answer == extractive(texts, embedded_per_request, service.mirror.embedder)


def test_temporal_prefers_the_query_day_and_backs_off(qa_world):
    _, _, service = qa_world
    on_day = service.ask("Doja Cat", "2023-08-31", k=3, strategy="temporal").as_dict()["evidence"]
    assert on_day and on_day[0]["event_day"] == 20230831
    later = service.ask("Doja Cat", "2023-09-04", k=3, strategy="temporal").as_dict()["evidence"]
    assert later and later[0]["event_day"] == 20230831  # widened to ±4 days
    before_anything = service.ask("Doja Cat", "2023-04-01", k=3, strategy="hybrid").as_dict()
    assert before_anything["evidence"] == [] and "holds nothing" in before_anything["answer"]


def test_ambiguity_is_reported_not_hidden(qa_world):
    _, _, service = qa_world
    result = service.ask("anna", "2023-05-02", k=3, strategy="temporal").as_dict()
    assert result["entity"]["name"] == "Anna Wintour"
    unknown = service.ask("zzqx unknown person", "2023-05-02", k=3).as_dict()
    assert unknown["entity"] is None and unknown["evidence"] == []


def test_http_api_validation_auth_and_metrics(qa_world):
    _, _, service = qa_world
    client = TestClient(create_app(service, {"graph": service.store.conn.ping}, api_keys=["k1"]))
    assert client.get("/healthz").json() == {"status": "ok"}
    assert client.get("/readyz").status_code == 200
    assert client.get("/v1/ask", params={"q": "doja", "date": "2023-05-02"}).status_code == 401
    auth = {"X-API-Key": "k1"}
    ok = client.get("/v1/ask", params={"q": "doja cat", "date": "2023-05-02", "k": 3}, headers=auth)
    assert ok.status_code == 200
    body = ok.json()
    assert set(body) >= {"query", "reformulated", "entity", "as_of", "strategy", "answer", "evidence", "latency_ms"}
    assert (
        client.get(
            "/v1/ask", params={"q": "doja", "date": "2023-05-02"}, headers={"Authorization": "Bearer k1"}
        ).status_code
        == 200
    )
    bad = [
        {"q": "doja", "date": "02/05/2023"},
        {"q": "doja", "date": "2023-02-30"},
        {"q": "doja", "date": "2023-05-02", "strategy": "magic"},
        {"q": "doja", "date": "2023-05-02", "k": 0},
        {"q": "doja", "date": "2023-05-02", "k": 51},
        {"q": "x" * 301, "date": "2023-05-02"},
        {"date": "2023-05-02"},
    ]
    for params in bad:
        response = client.get("/v1/ask", params=params, headers=auth)
        assert response.status_code == 422, (params, response.text)
        assert response.json()["detail"]
    entity = client.get("/v1/entities", params={"search": "Doja Cat"}, headers=auth).json()["entities"][0]
    timeline = client.get(
        f"/v1/entities/{entity['id']}/timeline",
        params={"from": "2023-05-01", "to": "2023-09-01", "as_of": "2023-05-31"},
        headers=auth,
    )
    assert timeline.status_code == 200 and {i["event_day"] for i in timeline.json()["interactions"]} <= {
        20230501,
        20230502,
    }
    assert (
        client.get(
            "/v1/entities/e_nope/timeline", params={"from": "2023-05-01", "to": "2023-05-02"}, headers=auth
        ).status_code
        == 404
    )
    metrics = client.get("/metrics", headers=auth).text
    assert 'newskg_http_requests_total{path="/v1/ask",status="422"}' in metrics
    assert "newskg_http_request_seconds_bucket" in metrics
    assert client.get("/openapi.json", headers=auth).status_code == 200


def test_serve_with_the_pipeline_is_always_current(isolated, tmp_path):
    env = isolated.env
    ingest_stories(env, tmp_path, STORIES[:1], "first.jsonl")
    port = free_port()
    server = serve_process(env, port, "--pipeline")
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for(lambda: httpx.get(base + "/readyz", timeout=2).status_code == 200, 120, server)
        wait_for(lambda: evidence(base, "2023-05-01"), 120, server)  # the first story flowed through
        assert not any("Accor Arena" in e["text"] for e in evidence(base, "2023-09-01"))
        ingest_stories(env, tmp_path, STORIES[2:], "later.jsonl")  # a new article arrives through Kafka …
        wait_for(
            lambda: any("Accor Arena" in e["text"] or "Pharrell" in e["text"] for e in evidence(base, "2023-09-01")),
            120,
            server,
        )  # … and answers see it
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    assert server.returncode in (0, -signal.SIGTERM)
