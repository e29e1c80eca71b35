"""The fetcher connects where the check looked: real HTTP(S) servers on loopback addresses, the name resolution
monkeypatched (resolving, not a mocked server). 127.0.0.2 stands in for a public address, since no public server
is reachable from a test; 127.0.0.1 on the same port is the "inside" that must never be reached. Also the bounds on
decompression of pages and robots.txt, measured with tracemalloc."""

from __future__ import annotations

import contextlib
import gzip
import shutil
import socket
import ssl
import subprocess
import threading
import tracemalloc
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from newskg.ingest.sources import http
from newskg.ingest.sources.http import FetchRefused, PoliteFetcher

PUBLIC_STAND_IN = "127.0.0.2"
INSIDE = "127.0.0.1"
PAGE = b"<html><body><article><p>The public page.</p></article></body></html>"


class Server:
    """A tiny site on one address: routes path -> (status, headers, body); every request's path and Host kept."""

    def __init__(self, address: str, port: int, routes: dict[str, tuple[int, dict[str, str], bytes]]):
        self.routes = routes
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                server.requests.append((self.path, self.headers.get("Host", "")))
                status, headers, body = server.routes.get(self.path, (404, {}, b"not found"))
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer((address, port), Handler)
        self.port = self.httpd.server_address[1]

    def start(self) -> Server:
        threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def paths(self) -> list[str]:
        return [path for path, _ in self.requests]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def inside() -> Iterator[Server]:
    """What a rebinding name points at the second time: loopback, where nothing may be fetched."""
    server = Server(INSIDE, 0, {"/page": (200, {}, b"<html>INTERNAL SECRET</html>")}).start()
    yield server
    server.stop()


@pytest.fixture
def public(inside: Server) -> Iterator[Server]:
    """The public stand-in, on the inside server's port: one URL, two possible destinations."""
    server = Server(
        PUBLIC_STAND_IN,
        inside.port,
        {
            "/robots.txt": (200, {}, b"User-agent: *\nAllow: /\n"),
            "/page": (200, {"Content-Type": "text/html"}, PAGE),
            "/go": (302, {"Location": f"http://inside.test:{inside.port}/page"}, b""),
        },
    ).start()
    yield server
    server.stop()


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The resolver: `rebind.test` answers the public stand-in to its first two lookups and loopback after;
    `inside.test` always loopback. Patched in `socket` itself, so a second resolution by httpx would see it too.
    The stand-in counts as public for the check."""
    real_getaddrinfo = socket.getaddrinfo
    lookups: dict[str, list[str]] = {"rebind.test": [], "inside.test": []}

    def getaddrinfo(host, port, *args, **kwargs):  # type: ignore[no-untyped-def]
        if host not in lookups:
            return real_getaddrinfo(host, port, *args, **kwargs)
        answer = PUBLIC_STAND_IN if host == "rebind.test" and len(lookups[host]) < 2 else INSIDE
        lookups[host].append(answer)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (answer, int(port or 0)))]

    real_reason = http.non_public_reason
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(http, "non_public_reason", lambda a: None if str(a) == PUBLIC_STAND_IN else real_reason(a))
    return lookups


def fetcher(**options: object) -> PoliteFetcher:
    return PoliteFetcher("newskg-test", 3.0, 0.0, 100_000, **options)  # type: ignore[arg-type]


def test_a_name_that_rebinds_to_loopback_after_the_check_is_fetched_from_the_vetted_address(public, inside, names):
    """review finding: DNS rebinding — `check_target` vetted one resolution and httpx connected after a second one
    (a name answering a public address first and 127.0.0.1 next was fetched). The fetch now connects to the vetted
    address, keeps the Host header, and never resolves the name again."""
    page = fetcher().fetch(f"http://rebind.test:{public.port}/page")
    assert page.content == PAGE and page.url == f"http://rebind.test:{public.port}/page"
    assert inside.requests == []  # nothing reached the inside, though the name now answers 127.0.0.1
    assert public.requests == [("/robots.txt", f"rebind.test:{public.port}"), ("/page", f"rebind.test:{public.port}")]
    assert names["rebind.test"] == [PUBLIC_STAND_IN, PUBLIC_STAND_IN]  # one lookup per checked hop, none to connect


def test_a_redirect_hop_to_a_name_that_resolves_inside_is_refused(public, inside, names):
    """review finding: DNS rebinding — each redirect hop is vetted again and connected at its own vetted address."""
    with pytest.raises(FetchRefused) as refused:
        fetcher().fetch(f"http://rebind.test:{public.port}/go")
    assert refused.value.reason == "refused_target" and "inside.test" in refused.value.detail
    assert inside.requests == [] and "/go" in public.paths()


def test_the_environment_s_proxy_is_not_used(public, inside, names, monkeypatch):
    """review finding: DNS rebinding — `trust_env` let HTTP(S)_PROXY route a fetch through a proxy that resolves
    the name itself; here the "proxy" is the inside server, and it sees nothing."""
    for variable in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "all_proxy"):
        monkeypatch.setenv(variable, f"http://{INSIDE}:{inside.port}")
    assert fetcher().fetch(f"http://rebind.test:{public.port}/page").content == PAGE
    assert inside.requests == []


@pytest.fixture
def tls_files(tmp_path: Path) -> Callable[[str], tuple[Path, Path]]:
    if not shutil.which("openssl"):
        pytest.skip("no openssl binary to make a test certificate")

    def make(name: str) -> tuple[Path, Path]:
        cert, key = tmp_path / f"{name}.crt", tmp_path / f"{name}.key"
        subprocess.run(
            [
                *("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
                *("-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", f"/CN={name}"),
                *("-addext", f"subjectAltName=DNS:{name}"),
            ],
            check=True,
            capture_output=True,
        )
        return cert, key

    return make


def https_server(port: int, cert: Path, key: Path, seen_names: list[str]) -> Server:
    server = Server(PUBLIC_STAND_IN, port, {"/robots.txt": (404, {}, b""), "/page": (200, {}, PAGE)})
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.sni_callback = lambda _sock, name, _ctx: seen_names.append(name or "")  # type: ignore[assignment]
    server.httpd.socket = context.wrap_socket(server.httpd.socket, server_side=True)
    return server.start()


def test_https_to_the_vetted_address_sends_the_name_as_sni_and_verifies_the_certificate_for_it(
    inside, names, tls_files
):
    """review finding: DNS rebinding — connecting to the address must not weaken TLS: the server gets the name
    (SNI) and the certificate is checked against the name, not the address."""
    cert, key = tls_files("rebind.test")
    seen: list[str] = []
    server = https_server(inside.port, cert, key, seen)
    try:
        page = fetcher(verify=ssl.create_default_context(cafile=str(cert))).fetch(
            f"https://rebind.test:{inside.port}/page"
        )
        assert page.content == PAGE and seen and set(seen) == {"rebind.test"}
        assert inside.requests == []
    finally:
        server.stop()


def test_a_certificate_for_another_name_is_refused(inside, names, tls_files):
    """review finding: DNS rebinding — certificate verification stays on for the original name."""
    cert, key = tls_files("elsewhere.test")
    server = https_server(inside.port, cert, key, [])
    try:
        with pytest.raises(FetchRefused) as refused:  # robots.txt unreachable (TLS fails): nothing is fetched
            fetcher(verify=ssl.create_default_context(cafile=str(cert))).fetch(
                f"https://rebind.test:{inside.port}/page"
            )
        assert refused.value.reason == "robots_disallowed" and server.paths() == []
    finally:
        server.stop()


BOMB = gzip.compress(b" " * 40_000_000, compresslevel=9)  # ~40 KB that inflate to 40 MB


@pytest.fixture
def bombs() -> Iterator[Server]:
    """Pages and robots.txt gzip-encoded: one that inflates far past the fetcher's 100 KB cap, one under it."""
    gz = {"Content-Encoding": "gzip", "Content-Type": "text/html"}
    server = Server(
        INSIDE,
        0,
        {
            "/robots.txt": (200, {}, b"User-agent: *\nAllow: /\n"),
            "/bomb": (200, gz, BOMB),
            "/small": (200, gz, gzip.compress(PAGE)),
            "/br": (200, {"Content-Encoding": "br"}, b"\x0b\x02\x80hi\x03"),
        },
    ).start()
    yield server
    server.stop()


def peak_bytes(action: Callable[[], object]) -> int:
    tracemalloc.start()
    with contextlib.suppress(FetchRefused):
        action()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_a_gzip_page_is_inflated_under_the_cap_and_a_bomb_is_stopped_early(bombs):
    """review finding: unbounded decompression — httpx inflated each network chunk whole (~1000x), so the cap was
    checked only after the memory was spent; the body is now inflated in bounded steps."""
    client = fetcher(allow_private=True)
    assert client.fetch(f"http://{INSIDE}:{bombs.port}/small").content == PAGE
    with pytest.raises(FetchRefused) as refused:
        client.fetch(f"http://{INSIDE}:{bombs.port}/bomb")
    assert refused.value.reason == "too_large"
    assert peak_bytes(lambda: fetcher(allow_private=True).fetch(f"http://{INSIDE}:{bombs.port}/bomb")) < 8_000_000
    with pytest.raises(FetchRefused) as unsupported:
        client.fetch(f"http://{INSIDE}:{bombs.port}/br")
    assert unsupported.value.reason == "unsupported_encoding"


@pytest.mark.parametrize("body", [BOMB, b"User-agent: *\nAllow: /\n" + b"#" * 200_000], ids=["gzip-bomb", "plain"])
def test_robots_over_the_cap_is_unavailable_so_nothing_is_fetched(bombs, body):
    """review finding: unbounded decompression — robots.txt was read whole and auto-decompressed. It is now read
    under the cap; over it, robots.txt counts as unavailable (nothing fetched from that host): the safe side,
    since a cut-off file could lose a Disallow line."""
    encoding = {"Content-Encoding": "gzip"} if body is BOMB else {}
    bombs.routes["/robots.txt"] = (200, encoding, body)

    def fetch_small() -> None:
        fetcher(allow_private=True).fetch(f"http://{INSIDE}:{bombs.port}/small")

    with pytest.raises(FetchRefused) as refused:
        fetch_small()
    assert refused.value.reason == "robots_disallowed" and "/small" not in bombs.paths()
    assert peak_bytes(fetch_small) < 8_000_000
