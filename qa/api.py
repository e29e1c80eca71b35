"""The always-current QA endpoint (FastAPI). It reads the live graph and mirror on every request; every
parameter is validated with a clear 4xx; API keys when configured; Prometheus metrics."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Annotated

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Histogram, generate_latest

from core.timeaxes import day_key
from qa.retrieve import STRATEGIES
from qa.service import QAService

DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
OPEN_PATHS = {"/healthz", "/readyz"}


def _day(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    if not DATE.match(value):
        raise HTTPException(422, f"{name} must be a date as YYYY-MM-DD, not {value!r}")
    try:
        return day_key(value)
    except ValueError as exc:
        raise HTTPException(422, f"{name} {value!r} is not a calendar date") from exc


def create_app(service: QAService, readiness: dict[str, Callable[[], bool]], api_keys: list[str],
               max_query_chars: int = 300) -> FastAPI:
    app = FastAPI(title="newskg", version="0.1.0",
                  description="Entity-centric temporal QA over the NEON news entity-interaction graph.")
    registry = CollectorRegistry()
    requests = Counter("newskg_http_requests_total", "HTTP requests", ["path", "status"], registry=registry)
    latency = Histogram("newskg_http_request_seconds", "HTTP request latency", ["path"], registry=registry,
                        buckets=(0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5))
    keys = set(api_keys)

    @app.middleware("http")
    async def authenticate_and_measure(request: Request, call_next):
        start = time.perf_counter()
        if keys and request.url.path not in OPEN_PATHS:
            bearer = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            if request.headers.get("x-api-key") not in keys and bearer not in keys:
                requests.labels(request.url.path, "401").inc()
                return JSONResponse({"detail": "missing or unknown API key (X-API-Key or Bearer)"}, status_code=401)
        response = await call_next(request)
        route = request.scope.get("route")
        path = route.path if route else "unmatched"
        requests.labels(path, str(response.status_code)).inc()
        latency.labels(path).observe(time.perf_counter() - start)
        return response

    @app.get("/v1/ask")
    def ask(q: Annotated[str, Query(min_length=1, description="A telegraphic query, e.g. 'doja cat news'")],
            date: Annotated[str, Query(description="The query's date, YYYY-MM-DD (the graph as of that day)")],
            k: Annotated[int, Query(ge=1, le=50)] = 10,
            strategy: Annotated[str, Query(description=" | ".join(STRATEGIES))] = "hybrid") -> dict:
        if len(q) > max_query_chars:
            raise HTTPException(422, f"q is {len(q)} characters; at most {max_query_chars}")
        if strategy not in STRATEGIES:
            raise HTTPException(422, f"strategy must be one of {', '.join(STRATEGIES)}, not {strategy!r}")
        _day(date, "date")
        return service.ask(q, date, k=k, strategy=strategy).as_dict()

    @app.get("/v1/entities")
    def entities(search: Annotated[str, Query(min_length=1, max_length=200)],
                 limit: Annotated[int, Query(ge=1, le=100)] = 10) -> dict:
        best, close = service.resolver.resolve(search)
        found = [best, *close] if best else []
        exact = service.store.find_entities(search, limit=limit)
        seen = {e.id for e in found}
        rows = [e.__dict__ for e in found] + [r for r in exact if r["id"] not in seen]
        return {"search": search, "entities": rows[:limit]}

    @app.get("/v1/entities/{entity_id}/timeline")
    def timeline(entity_id: str, from_: Annotated[str, Query(alias="from")], to: str,
                 as_of: str | None = None, limit: Annotated[int, Query(ge=1, le=1000)] = 200) -> dict:
        first, last, as_of_day = _day(from_, "from"), _day(to, "to"), _day(as_of, "as_of")
        if first > last:
            raise HTTPException(422, "from is after to")
        if not service.store.find_entities(entity_id, limit=1):
            raise HTTPException(404, f"no entity {entity_id!r}")
        rows = service.store.timeline(entity_id, first, last, as_of_day, limit)
        return {"entity_id": entity_id, "from": from_, "to": to, "as_of": as_of, "interactions": rows}

    @app.get("/healthz")
    def healthz() -> dict:
        return {"status": "ok"}

    @app.get("/readyz")
    def readyz() -> JSONResponse:
        checks = {}
        for name, check in readiness.items():
            try:
                checks[name] = bool(check())
            except Exception:
                checks[name] = False
        return JSONResponse({"ready": all(checks.values()), "checks": checks},
                            status_code=200 if all(checks.values()) else 503)

    @app.get("/metrics")
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app
