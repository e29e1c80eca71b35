"""Polite, guarded HTTP fetching for feeds and their pages: redirects followed by hand (bounded), and on every hop
the target checked (http/https, every resolved address public unless allowed) and that host's robots.txt
honoured; a minimum interval per domain, timeouts, a size cap read while streaming, and conditional GET."""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser

import httpx

from core.errors import NewskgError

REDIRECTS = frozenset({301, 302, 303, 307, 308})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class _Robots(RobotFileParser):
    """RobotFileParser with the two flags `can_fetch` reads declared (typeshed leaves them out): set to answer for
    an unreachable or missing robots.txt."""

    disallow_all: bool
    allow_all: bool


class FetchRefused(NewskgError):
    """Not fetched on purpose (robots.txt, size cap); `reason` is a dead-letter reason code."""

    REASON = "refused_target"

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}", reason=reason)
        self.detail = detail


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
    """Every address the host resolves to (a literal address resolves to itself)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:  # transient or mistyped: like a failed connection
        raise httpx.ConnectError(f"cannot resolve {host}: {exc}") from exc
    # sockaddr[0] is the host as a string for AF_INET/AF_INET6 (typeshed allows int for other families).
    return sorted({ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos}, key=str)


def check_target(url: str, allow_private: bool) -> None:
    """Refuse what a feed must not make us fetch: other schemes, and hosts with any non-public address (all are
    checked: a name with one public and one private address could be connected to either)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefused("refused_target", f"{url}: only http(s) URLs with a host are fetched")
    if allow_private:
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    for address in resolve(parts.hostname, port):
        if reason := non_public_reason(address):
            raise FetchRefused(
                "refused_target",
                f"{url}: {parts.hostname} resolves to {address} ({reason}); "
                "set NEWSKG_FETCH_ALLOW_PRIVATE=true to allow it",
            )


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
    ):
        self.user_agent = user_agent
        self.min_interval_s = min_interval_s
        self.max_bytes = max_bytes
        self.allow_private = allow_private
        self.max_redirects = max_redirects
        # Redirects by hand: each hop is a new target to check (address, robots.txt, interval).
        self._client = httpx.Client(timeout=timeout_s, follow_redirects=False, headers={"User-Agent": user_agent})
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
            check_target(url, self.allow_private)
            if not self.allowed(url):
                raise FetchRefused("robots_disallowed", f"robots.txt of {_origin(url)} disallows {url}")
            self._wait_turn(url)
            result = self._fetch_one(url, headers)
            if isinstance(result, FetchResult):
                return result
            url = result
        raise FetchRefused("too_many_redirects", f"more than {self.max_redirects} redirects from {url}")

    def _fetch_one(self, url: str, headers: dict[str, str]) -> FetchResult | str:
        """One request: the result, or the next URL when the answer is a redirect."""
        with self._client.stream("GET", url, headers=headers) as response:
            if response.status_code in REDIRECTS and response.headers.get("location"):
                return urljoin(url, response.headers["location"])
            if response.status_code == 304:
                return FetchResult(
                    str(response.url), 304, b"", headers.get("If-None-Match"), headers.get("If-Modified-Since"), None
                )
            response.raise_for_status()
            declared = int(response.headers.get("content-length") or 0)
            if declared > self.max_bytes:
                raise FetchRefused("too_large", f"{url}: Content-Length {declared} > limit {self.max_bytes}")
            content = self._read_capped(response, url)
            return FetchResult(
                str(response.url),
                response.status_code,
                content,
                response.headers.get("etag"),
                response.headers.get("last-modified"),
                response.headers.get("content-type"),
            )

    def _read_capped(self, response: httpx.Response, url: str) -> bytes:
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.max_bytes:
                raise FetchRefused("too_large", f"{url}: more than {self.max_bytes} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def allowed(self, url: str) -> bool:
        origin = _origin(url)
        if origin not in self._robots:
            self._robots[origin] = self._load_robots(origin)
        return self._robots[origin].can_fetch(self.user_agent, url)

    def _load_robots(self, origin: str) -> _Robots:
        parser = _Robots(origin + "/robots.txt")
        try:
            response = self._get_robots(origin + "/robots.txt")
        except (httpx.HTTPError, FetchRefused):
            parser.disallow_all = True  # unreachable robots.txt: assume nothing may be fetched (RFC 9309 §2.3.1.4)
            return parser
        if response.status_code >= 500:
            parser.disallow_all = True
        elif response.status_code >= 400:
            parser.allow_all = True  # no robots.txt: everything is allowed
        else:
            parser.parse(response.text.splitlines())
        return parser

    def _get_robots(self, url: str) -> httpx.Response:
        """robots.txt, its redirects followed (RFC 9309: at least five hops), every hop's target checked."""
        for _ in range(self.max_redirects + 1):
            check_target(url, self.allow_private)
            self._wait_turn(url)
            response = self._client.get(url)
            if response.status_code not in REDIRECTS or not response.headers.get("location"):
                return response
            url = urljoin(url, response.headers["location"])
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


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"
