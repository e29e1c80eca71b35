"""Polite HTTP fetching for feeds and their pages: robots.txt honoured, a minimum interval per domain,
timeouts, a size cap read while streaming, and conditional GET."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx


class FetchRefused(Exception):
    """Not fetched on purpose (robots.txt, size cap); `reason` is a dead-letter reason code."""

    def __init__(self, reason: str, detail: str):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


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
    def __init__(self, user_agent: str, timeout_s: float, min_interval_s: float, max_bytes: int):
        self.user_agent = user_agent
        self.min_interval_s = min_interval_s
        self.max_bytes = max_bytes
        self._client = httpx.Client(timeout=timeout_s, follow_redirects=True, headers={"User-Agent": user_agent})
        self._robots: dict[str, RobotFileParser] = {}
        self._last_request: dict[str, float] = {}
        self._lock = threading.Lock()

    def fetch(self, url: str, etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        if not self.allowed(url):
            raise FetchRefused("robots_disallowed", f"robots.txt of {_origin(url)} disallows {url}")
        headers = {}
        if etag:
            headers["If-None-Match"] = etag
        if last_modified:
            headers["If-Modified-Since"] = last_modified
        self._wait_turn(url)
        with self._client.stream("GET", url, headers=headers) as response:
            if response.status_code == 304:
                return FetchResult(str(response.url), 304, b"", etag, last_modified, None)
            response.raise_for_status()
            declared = int(response.headers.get("content-length") or 0)
            if declared > self.max_bytes:
                raise FetchRefused("too_large", f"{url}: Content-Length {declared} > limit {self.max_bytes}")
            content = self._read_capped(response, url)
            return FetchResult(str(response.url), response.status_code, content, response.headers.get("etag"),
                               response.headers.get("last-modified"), response.headers.get("content-type"))

    def _read_capped(self, response: httpx.Response, url: str) -> bytes:
        chunks, size = [], 0
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

    def _load_robots(self, origin: str) -> RobotFileParser:
        parser = RobotFileParser(origin + "/robots.txt")
        try:
            self._wait_turn(origin)
            response = self._client.get(origin + "/robots.txt")
        except httpx.HTTPError:
            parser.disallow_all = True  # unreachable robots.txt: assume nothing may be fetched (RFC 9309 §2.3.1.4)
            return parser
        if response.status_code >= 500:
            parser.disallow_all = True
        elif response.status_code >= 400:
            parser.allow_all = True  # no robots.txt: everything is allowed
        else:
            parser.parse(response.text.splitlines())
        return parser

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
