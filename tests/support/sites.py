"""Small real HTTP servers for the tests: a site of fixed routes that records every request it gets, and a
fault-injecting proxy in front of an OpenAI-compatible endpoint (the local llama.cpp server)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

from tests.support.adversarial import Route


class Site:
    """Routes served on one address; every request (method, path, Host) is recorded, answered or not."""

    def __init__(self, address: str, port: int = 0, routes: dict[str, Route] | None = None):
        self.routes = routes or {}
        self.requests: list[tuple[str, str, str]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _answer(self) -> None:
                site.requests.append((self.command, self.path, self.headers.get("Host", "")))
                route = site.routes.get(self.path, Route(404, b"not found"))
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.status not in (204, 304):
                    self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                if route.status not in (204, 304) and self.command != "HEAD":
                    self.wfile.write(route.body)

            do_GET = do_POST = do_HEAD = do_PUT = _answer

        self.httpd = ThreadingHTTPServer((address, port), Handler)
        self.port = self.httpd.server_address[1]
        self.base = f"http://{address}:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def paths(self) -> list[str]:
        return [path for _, path, _ in self.requests]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@dataclass
class FaultLog:
    faults: list[int] = field(default_factory=list[int])  # the status answered to each faulted request, in order
    forwarded: list[int] = field(default_factory=list[int])  # the upstream's status for each forwarded request


class FaultProxy:
    """An HTTP proxy in front of `upstream` (a base URL such as http://127.0.0.1:PORT/v1): the first requests to
    /chat/completions are answered with the statuses of `faults` in turn (e.g. 429, 429, 503, …, with a Retry-After
    of 0 so the client's own backoff decides the pace), every later one is forwarded as it is and its answer returned.
    Other paths are always forwarded."""

    def __init__(self, upstream: str, faults: list[int]):
        self.upstream = upstream.rstrip("/")
        self.pending = list(faults)
        self.log = FaultLog()
        self.lock = threading.Lock()
        self.client = httpx.Client(timeout=300, trust_env=False)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                proxy.handle(self, b"")

            def do_POST(self) -> None:
                proxy.handle(self, self.rfile.read(int(self.headers.get("Content-Length") or 0)))

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()

    def handle(self, request: BaseHTTPRequestHandler, body: bytes) -> None:
        path = request.path.removeprefix("/v1")
        fault = None
        with self.lock:
            if path.startswith("/chat/completions") and self.pending:
                fault = self.pending.pop(0)
                self.log.faults.append(fault)
        if fault is not None:
            message = b'{"error": {"message": "injected fault", "type": "server_error"}}'
            request.send_response(fault)
            request.send_header("Content-Type", "application/json")
            request.send_header("Retry-After", "0")
            request.send_header("Content-Length", str(len(message)))
            request.end_headers()
            request.wfile.write(message)
            return
        headers = {
            k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length", "connection")
        }
        answer = self.client.request(request.command, self.upstream + path, content=body, headers=headers)
        with self.lock:
            self.log.forwarded.append(answer.status_code)
        request.send_response(answer.status_code)
        for name, value in answer.headers.items():
            if name.lower() not in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                request.send_header(name, value)
        request.send_header("Content-Length", str(len(answer.content)))
        request.end_headers()
        request.wfile.write(answer.content)

    @property
    def faults_left(self) -> int:
        with self.lock:
            return len(self.pending)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.client.close()
