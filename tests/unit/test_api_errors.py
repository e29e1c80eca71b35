"""The API's documented contract, without a graph: every 4xx is one `ErrorBody` (reason code + detail, the shape of
core/errors.py) whoever raised it; the schema says what the date parameters accept, documents the error bodies and
/metrics' content type; the request pool survives the app's lifespan ending and starting again. The full contract
against a real graph: tests/integration/test_api_contract.py (schemathesis)."""

from __future__ import annotations

from types import SimpleNamespace

from fastapi.testclient import TestClient
from prometheus_client import CONTENT_TYPE_LATEST

from newskg.qa.api import create_app
from newskg.qa.contract import DATE_PATTERN


def client(keys: list[str] | None = None, service: object = None) -> TestClient:
    return TestClient(create_app(service, {}, api_keys=keys or []))  # pyright: ignore[reportArgumentType]


def test_every_4xx_is_one_error_body_whoever_raised_it():
    api = client()
    cases = {
        ("/v1/entities", (("search", "x"), ("limit", "0"))): (422, "invalid_parameter", "limit"),  # FastAPI's check
        ("/v1/entities", (("search", "x"), ("as_of", "2023-02-30"))): (422, "invalid_parameter", "calendar"),  # ours
        ("/v1/ask", (("q", "x"), ("date", "02/05/2023"))): (422, "invalid_parameter", "date"),
        ("/v1/ask", (("q", "x"), ("date", "2023-05-02"), ("strategy", "magic"))): (
            422,
            "invalid_parameter",
            "strategy",
        ),
        ("/nowhere", ()): (404, "not_found", "Not Found"),
    }
    for (path, params), (status, reason, word) in cases.items():
        response = api.get(path, params=dict(params))
        assert response.status_code == status, (path, params, response.text)
        body = response.json()
        assert set(body) == {"reason", "detail"} and body["reason"] == reason and word in body["detail"], body
    refused = api.post("/healthz")
    assert refused.status_code == 405 and refused.json()["reason"] == "method_not_allowed"
    assert refused.headers["allow"] == "GET"
    denied = client(["k1"]).get("/v1/entities", params={"search": "x"})
    assert denied.status_code == 401 and denied.json()["reason"] == "unauthorized"


def test_the_schema_says_what_the_server_accepts():
    spec = client().get("/openapi.json").json()
    ask = spec["paths"]["/v1/ask"]["get"]
    date = next(p for p in ask["parameters"] if p["name"] == "date")["schema"]
    assert date["format"] == "date" and date["pattern"] == DATE_PATTERN
    strategy = next(p for p in ask["parameters"] if p["name"] == "strategy")["schema"]
    assert set(strategy["enum"]) == {"temporal", "generic", "hybrid", "newsrag"}
    timeline = spec["paths"]["/v1/entities/{entity_id}/timeline"]["get"]
    dates = {p["name"]: p["schema"] for p in timeline["parameters"] if p["name"] in ("from", "to", "as_of")}
    assert all("date" in str(schema) for schema in dates.values()), dates
    for operation in (ask, timeline):
        for status in ("422", *(("404",) if operation is timeline else ())):
            ref = operation["responses"][status]["content"]["application/json"]["schema"]["$ref"]
            assert ref.endswith("/ErrorBody")
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    metrics = spec["paths"]["/metrics"]["get"]["responses"]["200"]["content"]
    assert CONTENT_TYPE_LATEST in metrics and "application/json" not in metrics
    readyz = spec["paths"]["/readyz"]["get"]["responses"]
    assert {"200", "503"} <= set(readyz)


def test_the_request_pool_survives_the_lifespan_restarting():
    # A stand-in store: the timeline route asks it (on the pool) whether the entity exists.
    service = SimpleNamespace(store=SimpleNamespace(find_entities=lambda *args, **kwargs: []))
    app = create_app(service, {}, api_keys=[])  # pyright: ignore[reportArgumentType]
    params = {"from": "2023-05-01", "to": "2023-05-02"}
    for _ in range(2):  # startup, requests, shutdown; then again on the same app
        with TestClient(app) as api:
            response = api.get("/v1/entities/e_x/timeline", params=params)
            assert response.status_code == 404 and response.json()["reason"] == "not_found"
