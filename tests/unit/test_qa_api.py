"""The API's gate without a graph (no route below reaches the service): metric labels are route templates,
never raw paths; API keys are compared in constant time. Answers fall back to extractive on a real LLM
failure (a closed local port). The as-of helpers and the Browser guide's copy of the saved queries."""

from __future__ import annotations

import hmac
import html
import re
import time
import uuid
from collections.abc import Mapping
from importlib.resources import files

import pytest
from fastapi.testclient import TestClient

from newskg.core.llm.client import LLMClient, LLMOptions
from newskg.graph.browser import saved_queries
from newskg.graph.store.asof import AsOf, days_between
from newskg.qa.answer import generate
from newskg.qa.api import create_app
from newskg.qa.evidence import Evidence
from newskg.services.process import free_port

KEY = "k-secret-1"


def client(keys: list[str]) -> TestClient:
    # No route exercised here calls the service (401s, 422s, 404s and /healthz), so there is none.
    return TestClient(create_app(None, {}, api_keys=keys))


def series(metrics: str) -> set[str]:
    return set(re.findall(r'newskg_http_requests_total\{path="([^"]*)"', metrics))


def test_metric_labels_are_route_templates_never_raw_paths():
    api = client([KEY])
    for n in range(30):  # unauthenticated clients inventing paths …
        assert api.get(f"/v1/entities/e_{uuid.uuid4().hex}/timeline").status_code == 401
        assert api.get(f"/nothing/{n}").status_code == 401
    auth = {"X-API-Key": KEY}
    for n in range(30):  # … and authenticated ones
        assert (
            api.get(f"/v1/entities/e_{n}/timeline", params={"from": "bad", "to": "x"}, headers=auth).status_code == 422
        )
        assert api.get(f"/missing/{n}", headers=auth).status_code == 404
    assert api.get("/healthz").status_code == 200
    labels = series(api.get("/metrics", headers=auth).text)
    assert labels == {"/v1/entities/{entity_id}/timeline", "unmatched", "/healthz"}, labels


def test_api_keys_are_compared_in_constant_time(monkeypatch):
    compared: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a, b):
        compared.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    api = client([KEY, "other-key"])
    assert api.get("/v1/entities", params={"search": "x", "limit": 0}, headers={"X-API-Key": KEY}).status_code == 422
    assert (
        api.get(
            "/v1/entities", params={"search": "x", "limit": 0}, headers={"Authorization": f"Bearer {KEY}"}
        ).status_code
        == 422
    )
    for wrong in ("k-secret-2", "k-secret-1x", "", "ключ".encode()):  # non-ASCII bytes too: 401, not a crash
        response = api.get("/v1/entities", params={"search": "x"}, headers={"X-API-Key": wrong})
        assert response.status_code == 401, wrong
    assert api.get("/v1/entities", params={"search": "x"}).status_code == 401
    # Every request compared both offered values against both keys: no early exit on the first match.
    assert compared and len(compared) % 4 == 0 and len(compared) == 4 * 7
    assert (KEY.encode(), KEY.encode()) in compared


class SlowAnswers:
    """A service whose answer takes 30 ms (the header must count the app's time, not only routing)."""

    def ask(self, *args: object, **kwargs: object) -> SlowAnswers:
        time.sleep(0.03)
        return self

    def as_dict(self) -> dict[str, str]:
        return {"answer": "slow"}


def server_ms(headers: Mapping[str, str]) -> float:
    name, dur = headers["server-timing"].split(";")
    assert name == "app" and dur.startswith("dur=")
    return float(dur.removeprefix("dur="))


def test_every_response_says_the_servers_own_time_in_server_timing():
    """bench/qa.py compares it with the latency its clients saw: the server's share of a tail."""
    api = TestClient(create_app(SlowAnswers(), {}, api_keys=[]))  # pyright: ignore[reportArgumentType]
    assert 0 <= server_ms(api.get("/healthz").headers) < 1000
    assert 0 <= server_ms(api.get("/v1/ask", params={"q": "x", "date": "bad"}).headers) < 1000  # a 422 too
    answered = api.get("/v1/ask", params={"q": "doja cat", "date": "2023-05-01", "strategy": "temporal"})
    assert answered.json() == {"answer": "slow"} and server_ms(answered.headers) >= 30


@pytest.fixture
def evidence():
    return [Evidence("i1", "interaction", "Doja Cat dressed as Choupette", 20230501, 20230502, 1.0, ["alpha"])]


def test_a_failing_llm_endpoint_gives_the_extractive_answer_with_the_reason(evidence):
    closed = LLMClient(f"http://127.0.0.1:{free_port()}/v1", "smollm2", options=LLMOptions(max_retries=0, timeout_s=5))
    answer = generate(closed, "(Date: May 2, 2023) Doja Cat", evidence)
    assert answer.mode == "extractive_fallback" and answer.fallback_reason == "LLM call failed: APIConnectionError"
    assert "May 1, 2023: Doja Cat dressed as Choupette (alpha)" in answer.text
    none = generate(None, "(Date: May 2, 2023) Doja Cat", evidence)
    assert (none.mode, none.fallback_reason) == ("extractive", None)


def test_as_of_views_and_calendar_distance():
    assert days_between(20230301, 20230228) == 1 and days_between(20240301, 20240228) == 2  # leap year
    assert days_between(20230101, 20221231) == 1
    strict, published = AsOf(20230502), AsOf(20230502, "published")
    assert strict.params() == {"as_of_day": 20230502, "as_of_ms": 1683071999999}  # 2023-05-02T23:59:59.999Z
    assert published.params()["as_of_day"] == 20230502 and published.ms > 10**15  # no ingestion bound
    assert AsOf.of(None).is_latest and AsOf.of("2023-05-02") == strict and AsOf.of(20230502) == strict
    with pytest.raises(ValueError):
        AsOf(20230502, "someday")


def test_the_browser_guide_shows_the_saved_queries_verbatim():
    guide = files("newskg.graph.browser").joinpath("guide.html").read_text(encoding="utf-8")
    shown = {
        " ".join(html.unescape(block).split())
        for block in re.findall(r'<pre class="pre-scrollable code runnable">(.*?)</pre>', guide, re.S)
    }
    for name, (query, params) in saved_queries().items():
        assert " ".join(query.split()) in shown, name
        assert {"as_of_day", "as_of_ms"} <= set(params), name
