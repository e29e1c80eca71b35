"""Polite, guarded HTTP fetching for feeds and their pages: redirects followed by hand (bounded), and on every hop
the target checked (http/https, a URL that parses, every resolved address public unless allowed), the connection
made to an address that check vetted (never a second resolution: no DNS rebinding), and that host's robots.txt
honoured; a minimum interval per domain, timeouts, a size cap on the decoded body read while streaming (robots.txt
included), and conditional GET."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
import time
import zlib
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from http.cookiejar import CookieJar, DefaultCookiePolicy
from urllib.parse import SplitResult, urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from newskg.ingest.sources.rejects import SourceRejected

REDIRECTS = frozenset({301, 302, 303, 307, 308})
ACCEPT_ENCODING = "gzip, deflate"  # the codings `read_body` inflates itself, under the size cap
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class _Robots(RobotFileParser):
    """RobotFileParser with the two flags `can_fetch` reads declared (typeshed leaves them out): set to answer for
    an unreachable or missing robots.txt."""

    disallow_all: bool
    allow_all: bool


class FetchRefused(SourceRejected):
    """Not fetched on purpose (robots.txt, target, URL, size cap, encoding); `reason` is a dead-letter code."""

    REASON = "refused_target"


def non_public_reason(address: IPAddress) -> str | None:
    """Why an address must not be fetched from a feed link (None: a public address). Private, loopback,
    link-local (cloud metadata at 169.254.169.254), shared, reserved, documentation, multicast and unspecified
    ranges are all outside `is_global`; an IPv4 address mapped or embedded in IPv6 is judged as IPv4."""
    embedded = getattr(address, "ipv4_mapped", None) or getattr(address, "sixtofour", None)
    if embedded is not None:
        return non_public_reason(embedded)
    for kind in ("loopback", "link_local", "unspecified", "multicast", "reserved", "private"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if address.is_global else "not-global"


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address the host resolves to, in the resolver's order of preference (a literal resolves to itself)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:  # transient or mistyped: like a failed connection
        raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from exc
    # sockaddr[0] is the host as a string for AF_INET/AF_INET6 (typeshed allows int for other families).
    return list(dict.fromkeys(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos))


@dataclass(frozen=True)
class Target:
    """A URL cleared for fetching and the addresses it was vetted at. The connection goes to one of these, never
    to a second resolution of the name: a name answering a public address to the check and 127.0.0.1 to the
    connect (DNS rebinding) would otherwise be fetched from the inside."""

    url: httpx.URL
    addresses: list[IPAddress]


def check_target(url: str, allow_private: bool) -> Target:
    """Refuse what a feed must not make us fetch: URLs that do not parse, other schemes, and hosts with any
    non-public address (all are checked: a name with one public and one private address could be connected to
    either)."""
    parts, port = _split(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefused("refused_target", f"{url}: only http(s) URLs with a host are fetched")
    parsed = _httpx_url(url)
    addresses = resolve(parts.hostname, port or (443 if parts.scheme == "https" else 80))
    if not allow_private:
        _refuse_non_public(url, parts.hostname, addresses)
    return Target(parsed, addresses)


def _refuse_non_public(url: str, host: str, addresses: list[IPAddress]) -> None:
    for address in addresses:
        if reason := non_public_reason(address):
            raise FetchRefused(
                "refused_target",
                f"{url}: {host} resolves to {address} ({reason}); set NEWSKG_FETCH_ALLOW_PRIVATE=true to allow it",
            )


def _split(url: str) -> tuple[SplitResult, int | None]:
    """The URL's parts and port. `urlsplit` raises on `http://[::1/`, its `.port` on `http://h:abc/` or a port
    over 65535: a bad entry to dead-letter, not a reason to stop the poll."""
    try:
        parts = urlsplit(url)
        return parts, parts.port
    except ValueError as exc:
        raise FetchRefused("invalid_url", f"{url!r}: {exc}") from exc


def _httpx_url(url: str) -> httpx.URL:
    try:
        return httpx.URL(url)
    except httpx.InvalidURL as exc:  # e.g. a space or a control character in the host: not an httpx.HTTPError
        raise FetchRefused("invalid_url", f"{url!r}: {exc}") from exc


@dataclass(frozen=True)
class FetchResult:
    url: str
    status: int
    content: bytes
    etag: str | None
    last_modified: str | None
    content_type: str | None

    @property
    def not_modified(self) -> bool:
        return self.status == 304

    def text(self) -> str:
        from trafilatura.utils import decode_file

        return decode_file(self.content)


class PoliteFetcher:
    def __init__(
        self,
        user_agent: str,
        timeout_s: float,
        min_interval_s: float,
        max_bytes: int,
        allow_private: bool = False,
        max_redirects: int = 5,
        verify: ssl.SSLContext | bool = True,
    ):
        self.user_agent = user_agent
        self.min_interval_s = min_interval_s
        self.max_bytes = max_bytes
        self.allow_private = allow_private
        self.max_redirects = max_redirects
        self._client = httpx.Client(
            timeout=timeout_s,
            follow_redirects=False,  # by hand: each hop is a new target to check (address, robots.txt, interval)
            trust_env=False,  # no proxy from the environment: it would resolve the name itself, unvetted
            headers={"User-Agent": user_agent, "Accept-Encoding": ACCEPT_ENCODING},
            # Requests go to addresses, not names: a pooled connection (its TLS set up for one name) or a cookie
            # must not carry over to another name on the same address.
            limits=httpx.Limits(max_keepalive_connections=0),
            cookies=CookieJar(DefaultCookiePolicy(allowed_domains=[])),
            verify=verify,
        )
        self._robots: dict[str, _Robots] = {}
        self._last_request: dict[str, float] = {}
        self._lock = threading.Lock()

    def fetch(self, url: str, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        headers: dict[str, str] = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        for _ in range(self.max_redirects + 1):
            target = check_target(url, self.allow_private)
            if not self.allowed(url):
                raise FetchRefused("robots_disallowed", f"robots.txt of {_origin(url)} disallows {url}")
            self._wait_turn(url)
            result = self._fetch_one(target, url, headers)
            if isinstance(result, FetchResult):
                return result
            url = result
        raise FetchRefused("too_many_redirects", f"more than {self.max_redirects} redirects from {url}")

    def _fetch_one(self, target: Target, url: str, headers: dict[str, str]) -> FetchResult | str:
        """One request: the result, or the next URL when the answer is a redirect."""
        with self._open(target, headers) as response:
            if location := _redirect(response, url):
                return location
            if response.status_code == 304:
                return FetchResult(url, 304, b"", headers.get("If-None-Match"), headers.get("If-Modified-Since"), None)
            response.raise_for_status()
            declared = _declared_length(response)
            if declared > self.max_bytes:
                raise FetchRefused("too_large", f"{url}: Content-Length {declared} > limit {self.max_bytes}")
            return FetchResult(
                url,
                response.status_code,
                read_body(response, self.max_bytes, url),
                response.headers.get("etag"),
                response.headers.get("last-modified"),
                response.headers.get("content-type"),
            )

    @contextmanager
    def _open(self, target: Target, headers: dict[str, str]) -> Generator[httpx.Response]:
        """The streamed response from the first vetted address that takes the connection. The URL's host becomes
        that address; the Host header and (https) the TLS server name and certificate check keep the name."""
        host = target.url.raw_host.decode("ascii")
        extensions = {"sni_hostname": host} if target.url.scheme == "https" else {}
        failure: httpx.TransportError = httpx.ConnectError(f"{host} has no address")
        for address in target.addresses:
            request = self._client.build_request(
                "GET",
                target.url.copy_with(host=str(address)),
                headers={**headers, "Host": target.url.netloc.decode("ascii")},
                extensions=extensions,
            )
            try:
                response = self._client.send(request, stream=True)
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:  # the next vetted address, as a resolver would
                failure = exc
                continue
            try:
                yield response
            finally:
                response.close()
            return
        raise failure

    def allowed(self, url: str) -> bool:
        origin = _origin(url)
        if origin not in self._robots:
            self._robots[origin] = self._load_robots(origin)
        return self._robots[origin].can_fetch(self.user_agent, url)

    def _load_robots(self, origin: str) -> _Robots:
        parser = _Robots(origin + "/robots.txt")
        try:
            status, body = self._get_robots(origin + "/robots.txt")
        except (httpx.HTTPError, FetchRefused):
            # Unreachable, refused, or over NEWSKG_MAX_PAGE_BYTES: assume nothing may be fetched (RFC 9309
            # §2.3.1.4). For the oversize case this is the safe side: parsing a cut-off prefix could drop a
            # Disallow line written after it.
            parser.disallow_all = True
            return parser
        if status >= 500:
            parser.disallow_all = True
        elif status >= 400:
            parser.allow_all = True  # no robots.txt: everything is allowed
        else:
            parser.parse(body.decode("utf-8", "replace").splitlines())  # RFC 9309: robots.txt is UTF-8
        return parser

    def _get_robots(self, url: str) -> tuple[int, bytes]:
        """robots.txt's status and body (read under the size cap), its redirects followed (RFC 9309: at least
        five hops), every hop's target checked."""
        for _ in range(self.max_redirects + 1):
            target = check_target(url, self.allow_private)
            self._wait_turn(url)
            with self._open(target, {}) as response:
                location = _redirect(response, url)
                if location is None:
                    body = read_body(response, self.max_bytes, url) if response.is_success else b""
                    return response.status_code, body
            url = location
        raise FetchRefused("too_many_redirects", f"robots.txt redirects more than {self.max_redirects} times")

    def _wait_turn(self, url: str) -> None:
        """Keep at least min_interval (or the site's Crawl-delay, if larger) between requests to one host."""
        host = urlsplit(url).hostname or ""
        robots = self._robots.get(_origin(url))
        delay = max(self.min_interval_s, float((robots.crawl_delay(self.user_agent) if robots else None) or 0))
        with self._lock:
            wait = self._last_request.get(host, 0.0) + delay - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            self._last_request[host] = time.monotonic()

    def close(self) -> None:
        self._client.close()


def read_body(response: httpx.Response, limit: int, url: str) -> bytes:
    """The body, decoded from its Content-Encoding here (not by httpx, which inflates a whole network chunk at
    once, up to ~1000x its size) with the output bounded: more than `limit` bytes stops the decompression and
    refuses the body as too_large."""
    inflate = _inflater(response.headers.get("content-encoding", ""), url)
    body = bytearray()
    for raw in response.iter_raw():
        room = limit - len(body)
        try:
            data = inflate.decompress(raw, room + 1) if inflate else raw
        except zlib.error as exc:  # a corrupt body, as httpx would report it
            raise httpx.DecodingError(f"{url}: {exc}") from exc
        if len(data) > room:
            raise FetchRefused("too_large", f"{url}: more than {limit} bytes")
        body += data
    return bytes(body)


def _inflater(content_encoding: str, url: str):  # -> zlib's decompressor (its class is private in typeshed)
    codings = [c.strip().lower() for c in content_encoding.split(",")]
    codings = [c for c in codings if c not in ("", "identity")]
    if not codings:
        return None
    if codings in (["gzip"], ["x-gzip"], ["deflate"]):
        return zlib.decompressobj(32 + zlib.MAX_WBITS)  # 32: a gzip or a zlib header, whichever is there
    raise FetchRefused("unsupported_encoding", f"{url}: Content-Encoding {content_encoding!r} (asked for gzip)")


def _redirect(response: httpx.Response, url: str) -> str | None:
    """The next hop's URL when the response is a redirect (relative to the URL asked, not the address used)."""
    if response.status_code in REDIRECTS and response.headers.get("location"):
        return urljoin(url, response.headers["location"])
    return None


def _declared_length(response: httpx.Response) -> int:
    try:
        return int(response.headers.get("content-length") or 0)
    except ValueError:  # a malformed header: the streamed size cap still holds
        return 0


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
