"""The always-current QA endpoint (FastAPI). It reads the live graph and mirror on every request; every
parameter is validated with a clear 4xx; API keys when configured; Prometheus metrics (behind the key on the API
port, and unauthenticated on a separate metrics port when one is configured: `serve_metrics`).

Speed (bench/qa): the blocking graph and LLM calls run on a small pool of threads fed first-in first-out, so a
burst of clients queues fairly instead of fifty threads fighting over the GIL (which made the slowest 5% wait
four times the median); responses are serialised with orjson and the metrics/auth layer is plain ASGI."""

from __future__ import annotations

import asyncio
import hmac
import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict
from functools import partial
from pathlib import Path
from typing import Annotated, Any, TypeVar

import orjson
from fastapi import FastAPI, HTTPException, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    start_http_server,
)
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from newskg.core.settings import unusable_api_keys
from newskg.graph.store.asof import AsOf, Knowledge
from newskg.qa.contract import (
    ERRORS,
    NOT_READY,
    PATTERN_WORDS,
    REASONS,
    TEXT_PATTERN,
    WARMING,
    WARMUP_FAILED,
    ErrorBody,
    date_query,
    parse_day,
    text_query,
)
from newskg.qa.explore import PAGE_PATHS, explore_router
from newskg.qa.retrieve import Strategy
from newskg.qa.service import QAService
from newskg.qa.warmup import Warmup

OPEN_PATHS = {"/healthz", "/readyz", *PAGE_PATHS}  # the explorer's page and scripts hold no data
UNMATCHED = "unmatched"  # the metric label of every path no route serves
AS_OF_HELP = "YYYY-MM-DD: the graph as it stood at the end of that day (default: as it stands now)"
KNOWLEDGE_HELP = (
    "ingested (default): what the system knew at the end of the day | published: everything "
    "published by the day, also facts ingested after it (labelled in the response)"
)
TIMELINE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    404: {"model": ErrorBody, "description": "no such entity (as of the day)"},
}


class Readiness(BaseModel):
    """200: every check passed and the models are warm. 503: also `reason` and `detail` as in `ErrorBody`
    ("warming" while the models load, "warmup_failed" while a warm-up step is retried, "not_ready" when a
    dependency check fails)."""

    ready: bool
    checks: dict[str, bool]
    reason: str | None = None
    detail: str | None = None
    warmup_ms: dict[str, float] = {}


def _error(status: int, detail: str, headers: Mapping[str, str] | None = None) -> JSONResponse:
    body = ErrorBody(reason=REASONS.get(status, "client_error" if status < 500 else "server_error"), detail=detail)
    return JSONResponse(body.model_dump(), status_code=status, headers=headers)


def _validation_detail(exc: RequestValidationError) -> str:
    """pydantic's errors as one line: `query.k: Input should be greater than or equal to 1; ...`."""
    parts = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {_message(e)}" for e in exc.errors()]
    return "; ".join(parts) or "invalid request"


def _message(error: Mapping[str, Any]) -> str:
    """A pattern the contract names (qa/contract.py) said in words: "must be a date YYYY-MM-DD from ...", not the
    regex pydantic would quote."""
    words = PATTERN_WORDS.get(str(error.get("ctx", {}).get("pattern", "")))
    if error.get("type") == "string_pattern_mismatch" and words:
        return f"must be {words}"
    return str(error.get("msg", ""))


def _day(value: str | None, name: str) -> int | None:
    return None if value is None else parse_day(value, name)


T = TypeVar("T")


def _json(payload: dict[str, Any]) -> Response:
    return Response(orjson.dumps(payload), media_type="application/json")


class Gate:
    """Plain ASGI middleware: API-key check, then a request counter and a latency histogram per route.

    Metric labels are route templates ("/v1/entities/{entity_id}/timeline"), or "unmatched": never the raw path,
    which any client (authenticated or not) could vary to create unbounded series. Keys are compared in constant
    time."""

    def __init__(
        self, app: ASGIApp, keys: set[str], registry: CollectorRegistry, routes: list[BaseRoute] | None = None
    ):
        self.app, self.routes = app, routes if routes is not None else []
        self.keys = [key.encode() for key in sorted(keys)]
        self.requests = Counter("newskg_http_requests_total", "HTTP requests", ["path", "status"], registry=registry)
        self.latency = Histogram(
            "newskg_http_request_seconds",
            "HTTP request latency",
            ["path"],
            registry=registry,
            buckets=(0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5),
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        start, status = time.perf_counter(), 500
        if self.keys and scope["path"] not in OPEN_PATHS and not self._authorised(scope):
            self.requests.labels(self._template(scope), "401").inc()
            denied = _error(401, "missing or unknown API key (X-API-Key or Bearer)")
            return await denied(scope, receive, send)

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = _with_server_timing(message, start)
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            route = scope.get("route")  # set by the router on the shared scope when a route matched
            path = getattr(route, "path", None) or UNMATCHED
            self.requests.labels(path, str(status)).inc()
            self.latency.labels(path).observe(time.perf_counter() - start)

    def _template(self, scope: Scope) -> str:
        """The route a request would reach, found without running it (a refused request never gets routed)."""
        for route in self.routes:
            match, _ = route.matches(scope)
            if match != Match.NONE:
                return getattr(route, "path", UNMATCHED)
        return UNMATCHED

    def _authorised(self, scope: Scope) -> bool:
        raw: list[tuple[bytes, bytes]] = scope["headers"]
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}
        offered = [headers.get("x-api-key", ""), headers.get("authorization", "").removeprefix("Bearer ").strip()]
        # Every offered value against every key, with no early exit: the time taken says nothing about a key.
        matched = False
        for value in offered:
            for key in self.keys:
                matched |= hmac.compare_digest(value.encode("latin-1"), key)
        return matched


def _with_server_timing(message: Message, start: float) -> Message:
    """The response start with `Server-Timing: app;dur=<ms>`: the server's own time on the request, from the app
    receiving it to its response starting (routing, the pool's queue, the answer, serialising). A client compares
    it with the latency it saw, so a load test can tell the server's time from its own (bench/qa.py)."""
    ms = (time.perf_counter() - start) * 1000
    headers = [*message.get("headers", ()), (b"server-timing", f"app;dur={ms:.2f}".encode())]
    return {**message, "headers": headers}


def create_app(
    service: QAService,
    readiness: dict[str, Callable[[], bool]],
    api_keys: list[str],
    max_query_chars: int = 300,
    threads: int = 4,
    warmup: Warmup | None = None,
    spikes_file: Path | None = None,
) -> FastAPI:
    """`warmup` (qa/warmup.py) starts with the app (lifespan startup) and /readyz stays 503 "warming" until it has
    run; without one the app is ready as soon as its checks pass. `spikes_file`: the NEON evaluation's spike days for
    the explorer's timeline (qa/explore.py), used when the file is there. Keys that could never be told apart from
    a request without one are refused (ValueError), whoever builds the app."""
    refused = unusable_api_keys(api_keys)
    if refused:
        raise ValueError(f"api_keys: {refused}")
    app = FastAPI(
        title="newskg",
        version="0.1.0",
        description="Entity-centric temporal QA over the NEON news entity-interaction graph.",
    )
    _add_error_handlers(app)
    registry = CollectorRegistry()
    app.state.metrics_registry = registry  # for serve_metrics: the same series on the unauthenticated port
    app.add_middleware(Gate, keys=set(api_keys), registry=registry, routes=app.router.routes)
    pool = _Pool(threads)
    app.router.on_shutdown.append(pool.shutdown)
    if warmup is not None:
        _attach_warmup(app, warmup, registry)

    routes = _QueryRoutes(service, pool, max_query_chars)
    app.add_api_route("/v1/ask", routes.ask, methods=["GET"], responses=ERRORS)
    app.add_api_route("/v1/entities", routes.entities, methods=["GET"], responses=ERRORS)
    app.add_api_route("/v1/entities/{entity_id}/timeline", routes.timeline, methods=["GET"], responses=TIMELINE_ERRORS)

    # behind the same key check (Gate)
    app.include_router(explore_router(lambda: service.store, spikes_file=spikes_file))

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(
        "/readyz",
        response_model=Readiness,
        responses={503: {"model": Readiness, "description": "a dependency is not ready (see checks)"}},
    )
    def readyz() -> JSONResponse:
        body = _readiness(readiness, warmup)
        return JSONResponse(body.model_dump(exclude_none=True), status_code=200 if body.ready else 503)

    @app.get(
        "/metrics",
        response_class=PlainTextResponse,
        responses={
            200: {
                "description": "Prometheus text exposition format",
                "content": {CONTENT_TYPE_LATEST: {"schema": {"type": "string"}}},
            },
            401: ERRORS[401],
        },
    )
    def metrics() -> PlainTextResponse:
        return PlainTextResponse(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app


class _QueryRoutes:
    """The query endpoints (/v1): each runs its graph reads on the request threads, off the event loop."""

    def __init__(self, service: QAService, pool: _Pool, max_query_chars: int):
        self.service = service
        self.pool = pool
        self.max_query_chars = max_query_chars

    async def blocking(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self.pool.executor(), partial(fn, *args, **kwargs))

    async def ask(
        self,
        q: Annotated[str, text_query("A telegraphic query, e.g. 'doja cat news'")],
        date: Annotated[str, date_query("The query's date, YYYY-MM-DD (the graph as of that day)")],
        k: Annotated[int, Query(ge=1, le=50)] = 10,
        strategy: Annotated[Strategy, Query()] = "hybrid",
        knowledge: Annotated[Knowledge, Query(description=KNOWLEDGE_HELP)] = "ingested",
    ) -> Response:
        if len(q) > self.max_query_chars:
            raise HTTPException(422, f"q is {len(q)} characters; at most {self.max_query_chars}")
        _day(date, "date")
        result = await self.blocking(self.service.ask, q, date, k=k, strategy=strategy, knowledge=knowledge)
        return _json(result.as_dict())

    async def entities(
        self,
        search: Annotated[str, text_query(max_length=200)],
        limit: Annotated[int, Query(ge=1, le=100)] = 10,
        as_of: Annotated[str | None, date_query(AS_OF_HELP)] = None,
    ) -> Response:
        return _json(await self.blocking(_entities, self.service, search, limit, AsOf.of(_day(as_of, "as_of"))))

    async def timeline(
        self,
        entity_id: Annotated[str, PathParam(min_length=1, max_length=200, pattern=TEXT_PATTERN)],
        from_: Annotated[str, date_query("First event day, YYYY-MM-DD", alias="from")],
        to: Annotated[str, date_query("Last event day, YYYY-MM-DD (not before `from`: a reversed range is a 422)")],
        as_of: Annotated[str | None, date_query(AS_OF_HELP)] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> Response:
        first, last = parse_day(from_, "from"), parse_day(to, "to")
        view = AsOf.of(_day(as_of, "as_of"))
        if first > last:
            raise HTTPException(422, "from is after to")
        if not await self.blocking(self.service.store.find_entities, entity_id, limit=1, as_of=view):
            raise HTTPException(404, f"no entity {entity_id!r}" + (f" as of {as_of}" if as_of else ""))
        rows = await self.blocking(self.service.store.timeline, entity_id, first, last, view, limit)
        return _json({"entity_id": entity_id, "from": from_, "to": to, "as_of": as_of, "interactions": rows})


def _readiness(readiness: dict[str, Callable[[], bool]], warmup: Warmup | None) -> Readiness:
    checks: dict[str, bool] = {}
    for name, check in readiness.items():
        try:
            checks[name] = bool(check())
        except Exception:
            checks[name] = False
    timings = dict(warmup.timings_ms) if warmup else {}
    if warmup is not None:
        checks["warm"] = warmup.ready
        if not warmup.ready:
            reason = WARMUP_FAILED if warmup.state == "failed" else WARMING
            return Readiness(ready=False, checks=checks, reason=reason, detail=warmup.describe(), warmup_ms=timings)
    failed = [name for name, ok in checks.items() if not ok]
    if failed:
        detail = f"not ready: {', '.join(failed)}"
        return Readiness(ready=False, checks=checks, reason=NOT_READY, detail=detail, warmup_ms=timings)
    return Readiness(ready=True, checks=checks, warmup_ms=timings)


def _attach_warmup(app: FastAPI, warmup: Warmup, registry: CollectorRegistry) -> None:
    """Start the warm-up with the app, stop its retries at shutdown, and export each step's duration."""
    seconds = Gauge(
        "newskg_warmup_seconds", "Duration of each warm-up step before /readyz turned 200", ["step"], registry=registry
    )
    for name, ms in warmup.timings_ms.items():  # a warm-up that ran before the app existed
        seconds.labels(name).set(ms / 1000)
    warmup.add_listener(lambda name, s: seconds.labels(name).set(s))
    app.router.on_startup.append(warmup.start)
    app.router.on_shutdown.append(warmup.stop)


class _Pool:
    """The request threads, made when first needed: an app whose lifespan ended and started again (a test client
    per test, an ASGI server restarting the app) gets a new pool instead of a closed one that refuses every call."""

    def __init__(self, threads: int):
        self.threads = threads
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._executor is None:
                self._executor = ThreadPoolExecutor(max_workers=self.threads, thread_name_prefix="qa")
            return self._executor

    def shutdown(self) -> None:
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


def _add_error_handlers(app: FastAPI) -> None:
    """Every 4xx (ours, FastAPI's parameter validation, Starlette's 404/405) answers an `ErrorBody`."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        return _error(exc.status_code, str(exc.detail), exc.headers)

    async def invalid_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return _error(422, _validation_detail(exc))

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid_request)


class MetricsServer:
    """The app's Prometheus registry served on its own port, without the API key, so a scraper needs no secret.

    Only /metrics-style text lives there (request counts and latencies per route template: no data, no keys); the
    port is meant to be reachable from the monitoring namespace only (k8s/base/network-policies.yaml). A plain
    threaded WSGI server beside uvicorn: scraping never queues behind QA requests."""

    def __init__(self, registry: CollectorRegistry, host: str, port: int):
        self._server, self._thread = start_http_server(port, addr=host, registry=registry)

    @property
    def port(self) -> int:
        return self._server.server_port

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def serve_metrics(app: FastAPI, host: str, port: int) -> MetricsServer:
    """Start the unauthenticated metrics port for an app made by `create_app` (port 0: any free port)."""
    registry: CollectorRegistry = app.state.metrics_registry
    return MetricsServer(registry, host, port)


def _entities(service: QAService, search: str, limit: int, as_of: AsOf) -> dict[str, Any]:
    """The resolver's choice and its close runners-up, then exact name matches: all as of the day, with their
    popularity then."""
    best, close = service.resolver.resolve(search, as_of)
    found = [best, *close] if best else []
    exact = service.store.find_entities(search, limit=limit, as_of=as_of)
    seen = {e.id for e in found}
    rows = [asdict(e) for e in found] + [asdict(r) for r in exact if r.id not in seen]
    return {"search": search, "as_of": as_of.iso, "entities": rows[:limit]}
