"""Feeds against a real HTTP server on 127.0.0.1: robots.txt, conditional GET, per-domain interval, size cap,
seen URLs remembered across restarts, and the pages flowing on through the process stage."""

import itertools
import json
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from newskg.core.records import Chunk, DeadLetter, RawArticle, decode_any
from newskg.feeds import parse_every, poll_once, schedule_feed, scheduler
from newskg.ingest.kafka.reader import read_topic
from newskg.wiring import kafka_bootstrap, kafka_options
from tests.support.cli import newskg, newskg_json

pytestmark = pytest.mark.integration

PAGE = """<html lang="en"><head><title>{title}</title>{meta}</head><body><nav>Home | World</nav>
<article><h1>{title}</h1>{body}</article><footer>Contact us</footer></body></html>"""
PARAGRAPH = (
    "<p>The city council of Lyon approved the new tram line on a narrow vote after a long debate. "
    "Residents of the eastern districts had campaigned for the project for nearly a decade. "
    "Construction is expected to begin next spring and last about three years.</p>"
)

BODIES = {
    "tram": PARAGRAPH * 2,
    "budget": (
        "<p>The regional budget for next year grows by four percent, the finance office said on Monday. "
        "Most of the increase goes to schools and to repairing roads damaged by last winter's floods. "
        "Opposition members called the plan unrealistic and asked for an independent audit.</p>"
        "<p>A final vote is scheduled for the first week of October.</p>"
    ),
    "bridge": (
        "<p>Engineers closed the old stone bridge over the Saone after inspectors found deep cracks. "
        "Traffic will be diverted for at least six weeks while repairs are planned.</p>"
    ),
}


class Site:
    def __init__(self):
        self.items = ["/news/tram", "/news/budget", "/private/secret", "/news/huge"]
        self.requests: list[tuple[str, float, dict]] = []
        self.feed_version = 1

    def feed(self) -> bytes:
        entries = "".join(
            f"<item><title>Story {i}</title><link>{self.base}{path}</link>"
            f"<pubDate>{formatdate(1693440000 + i * 86400, usegmt=True)}</pubDate></item>"
            for i, path in enumerate(self.items)
        )
        return (
            f'<?xml version="1.0"?><rss version="2.0"><channel><title>Lyon Local</title>'
            f"<link>{self.base}</link>{entries}</channel></rss>"
        ).encode()

    def page(self, path: str) -> bytes:
        if path == "/news/huge":
            return PAGE.format(title="Huge", meta="", body=PARAGRAPH * 2000).encode()
        meta = '<meta property="article:published_time" content="2023-08-20T09:00:00Z">' if "tram" in path else ""
        topic = path.rsplit("/", 1)[1]
        return PAGE.format(title=topic.title(), meta=meta, body=BODIES[topic]).encode()


class SiteHandler(BaseHTTPRequestHandler):
    """Serves `state` (a subclass per site sets it): robots.txt, the feed (with its ETag) and the item pages."""

    state: Site

    def log_message(self, *args):
        pass

    def do_GET(self):
        state = self.state
        state.requests.append((self.path, time.monotonic(), dict(self.headers)))
        if self.path == "/robots.txt":
            return self._send(200, b"User-agent: *\nDisallow: /private/\n", "text/plain")
        if self.path == "/feed.xml":
            etag = f'"v{state.feed_version}"'
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, b"", "application/rss+xml", etag)
            return self._send(200, state.feed(), "application/rss+xml", etag)
        if self.path in state.items:
            return self._send(200, state.page(self.path), "text/html")
        return self._send(404, b"not found", "text/plain")

    def _send(self, status, body, ctype, etag=None):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Last-Modified", "Mon, 21 Aug 2023 10:00:00 GMT")
        if etag:
            self.send_header("ETag", etag)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)


@pytest.fixture
def site():
    state = Site()

    server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (SiteHandler,), {"state": state}))
    state.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()


@pytest.fixture
def feed_settings(stack, isolated, tmp_path):
    # The feed state lives in this test's data dir; the broker is the session's, named explicitly. The test
    # servers listen on loopback, which feeds may reach only with fetch_allow_private.
    return isolated.configured(
        data_dir=tmp_path,
        fetch_min_interval_s=0.3,
        max_page_bytes=100_000,
        fetch_allow_private=True,
        kafka_bootstrap=kafka_bootstrap(stack.settings),
    ).settings


def _paths(site, since=0):
    return [path for path, _, _ in site.requests[since:]]


def test_feed_polling_is_polite_conditional_and_remembers(site, feed_settings, stack):
    settings = feed_settings
    report = poll_once(settings, [site.base + "/feed.xml"])[0]
    assert (report.status, report.entries, report.sent) == ("ok", 4, 2)
    assert report.robots_disallowed == 1 and report.dead_letters == 2  # /private/ disallowed, /news/huge too big
    assert "/private/secret" not in _paths(site)
    assert _paths(site).count("/robots.txt") == 1
    page_times = [t for path, t, _ in site.requests if path.startswith("/news/")]
    assert all(b - a >= 0.29 for a, b in itertools.pairwise(page_times))  # per-domain interval
    assert all(h.get("User-Agent") == settings.fetch_user_agent for _, _, h in site.requests)

    articles = [RawArticle.from_bytes(r.value) for r in read_topic(kafka_options(settings), settings.topic_articles)]
    assert sorted(a.url for a in articles) == [site.base + "/news/budget", site.base + "/news/tram"]
    assert all(a.source == "Lyon Local" and a.feed_published and a.http_last_modified for a in articles)
    letters = [DeadLetter.from_bytes(r.value) for r in read_topic(kafka_options(settings), settings.topic_dlq)]
    assert sorted((d.reason, d.key, d.stage) for d in letters) == [
        ("robots_disallowed", site.base + "/private/secret", "feeds"),
        ("too_large", site.base + "/news/huge", "feeds"),
    ]

    # A restart (new poller, same data dir): the unchanged feed answers 304 and nothing is fetched again.
    mark = len(site.requests)
    again = poll_once(settings, [site.base + "/feed.xml"])[0]
    assert again.status == "not_modified" and again.sent == 0
    feed_request = next(h for path, _, h in site.requests[mark:] if path == "/feed.xml")
    assert feed_request.get("If-None-Match") == '"v1"'
    assert not [p for p in _paths(site, mark) if p.startswith("/news/")]

    # A new entry: only it is fetched; the URLs already sent are skipped.
    site.items.append("/news/bridge")
    site.feed_version = 2
    mark = len(site.requests)
    third = poll_once(settings, [site.base + "/feed.xml"])[0]
    assert (third.sent, third.already_seen) == (1, 4)  # the refused ones (dead letters) are not retried either
    assert [p for p in _paths(site, mark) if p.startswith("/news/")] == ["/news/bridge"]


def test_feed_pages_flow_through_the_process_stage_with_date_fallbacks(site, feed_settings, isolated):
    settings = feed_settings
    poll_once(settings, [site.base + "/feed.xml"])
    stats = newskg_json("run", "process", "--until-idle", env=isolated.env)["stages"]["process"]
    assert stats["consumed"] == 2 and stats["dead"] == 0
    chunks = [decode_any(r.value) for r in read_topic(kafka_options(settings), settings.topic_chunks)]
    days = {c.url.rsplit("/", 1)[1]: c.day for c in chunks if isinstance(c, Chunk)}
    assert days["tram"] == 20230820  # the page's own metadata date wins
    assert days["budget"] != 20230820  # no page date on it: a fallback (feed entry, Last-Modified) is used


def test_schedule_persists_across_restarts(tmp_path, stack):
    settings = stack.settings.model_copy(update={"data_dir": tmp_path})
    first = scheduler(settings, blocking=False)
    first.start(paused=True)
    schedule_feed(first, "http://127.0.0.1:9/feed.xml", parse_every("15m"))
    first.shutdown(wait=False)
    second = scheduler(settings, blocking=False)
    second.start(paused=True)
    jobs = second.get_jobs()
    second.shutdown(wait=False)
    assert [(j.name, j.trigger.interval.total_seconds()) for j in jobs] == [("http://127.0.0.1:9/feed.xml", 900)]
    with pytest.raises(ValueError):
        parse_every("soon")


class Host:
    """A tiny site on its own loopback port: robots.txt, pages and redirects, with every request recorded."""

    def __init__(self, robots: str, pages: dict[str, bytes], redirects: dict[str, str]):
        self.robots, self.pages, self.redirects = robots, pages, redirects
        self.requests: list[str] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                host.requests.append(self.path)
                if self.path == "/robots.txt":
                    return self._send(200, host.robots.encode(), "text/plain")
                if self.path in host.redirects:
                    self.send_response(302)
                    self.send_header("Location", host.redirects[self.path])
                    self.send_header("Content-Length", "0")
                    return self.end_headers()
                if self.path in host.pages:
                    return self._send(
                        200, host.pages[self.path], "text/html" if self.path != "/feed.xml" else "application/rss+xml"
                    )
                return self._send(404, b"not found", "text/plain")

            def _send(self, status, body, ctype):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def _rss(links: list[str]) -> bytes:
    items = "".join(
        f"<item><title>Story {i}</title><link>{link}</link>"
        f"<pubDate>{formatdate(1693440000 + i * 86400, usegmt=True)}</pubDate></item>"
        for i, link in enumerate(links)
    )
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>Hops</title>{items}</channel></rss>'.encode()


@pytest.fixture
def two_hosts():
    """The feed host redirects to a second host (another port: another robots.txt) that disallows /private/."""
    other = Host(
        "User-agent: *\nDisallow: /private/\n",
        {
            "/news/bridge": PAGE.format(title="Bridge", meta="", body=BODIES["bridge"]).encode(),
            "/private/leak": PAGE.format(title="Leak", meta="", body=BODIES["budget"]).encode(),
        },
        {},
    )
    feed = Host("User-agent: *\nAllow: /\n", {}, {})
    feed.redirects = {
        "/go/allowed": other.base + "/news/bridge",
        "/go/disallowed": other.base + "/private/leak",
        "/go/loop": "/go/loop",
    }
    feed.pages["/feed.xml"] = _rss([feed.base + path for path in feed.redirects] + ["file:///etc/passwd"])
    yield feed, other
    feed.server.shutdown()
    other.server.shutdown()


def test_robots_and_targets_are_checked_on_every_redirect_hop(two_hosts, feed_settings):
    feed, other = two_hosts
    settings = feed_settings.model_copy(update={"fetch_min_interval_s": 0.0, "fetch_max_redirects": 3})
    report = poll_once(settings, [feed.base + "/feed.xml"])[0]
    assert "/private/leak" not in other.requests  # refused by the second host's robots.txt, never requested
    assert (report.entries, report.sent, report.robots_disallowed, report.refused_target) == (4, 1, 1, 1)
    assert other.requests.count("/robots.txt") == 1 and "/news/bridge" in other.requests
    assert feed.requests.count("/go/loop") == 4  # the first request and 3 redirects, then refused
    options = kafka_options(settings)
    [article] = [RawArticle.from_bytes(r.value) for r in read_topic(options, settings.topic_articles)]
    assert article.url == other.base + "/news/bridge"  # the final URL of the chain
    letters = {
        d.key: d.reason for d in (DeadLetter.from_bytes(r.value) for r in read_topic(options, settings.topic_dlq))
    }
    assert letters == {
        feed.base + "/go/disallowed": "robots_disallowed",
        feed.base + "/go/loop": "too_many_redirects",
        "file://etc/passwd": "refused_target",
    }  # the link as feedparser hands it over


def test_private_targets_are_refused_without_allow_private(two_hosts, feed_settings):
    feed, other = two_hosts
    settings = feed_settings.model_copy(update={"fetch_allow_private": False})
    report = poll_once(settings, [feed.base + "/feed.xml"])[0]
    assert report.status == "error" and "refused_target" in report.errors[0] and report.sent == 0
    assert feed.requests == []  # refused before any request, robots.txt included

    from newskg.ingest.sources.http import FetchRefused, PoliteFetcher

    fetcher = PoliteFetcher("test", 5, 0, 100_000, allow_private=False)
    with pytest.raises(FetchRefused) as refused:
        fetcher.fetch(other.base + "/news/bridge")
    assert refused.value.reason == "refused_target" and other.requests == []
    fetcher.close()


def test_bad_entries_are_dead_letters_once_and_a_failed_feed_fails_the_command(stack, isolated, tmp_path):
    """review finding: feeds — an entry link such as `http://h:abc/` or a page with an empty body aborted the
    whole poll and was never marked seen, so every later poll died at it; `ingest feeds --once` exited 0 while its
    reports said `error`. Now each bad entry is one dead letter, later polls skip it, and the command exits 1."""
    site = Host(
        "User-agent: *\nAllow: /\n",
        {"/news/bridge": PAGE.format(title="Bridge", meta="", body=BODIES["bridge"]).encode(), "/empty": b""},
        {},
    )
    site.pages["/feed.xml"] = _rss(["http://h:abc/", site.base + "/empty", site.base + "/news/bridge"])
    configured = isolated.configured(
        data_dir=tmp_path,
        fetch_min_interval_s=0.0,
        fetch_allow_private=True,
        kafka_bootstrap=kafka_bootstrap(stack.settings),
    )
    feed, missing = site.base + "/feed.xml", site.base + "/missing.xml"
    first = newskg("ingest", "feeds", "--once", feed, missing, "--json", env=configured.env, check=False)
    assert first.returncode == 1, first.stderr
    reports = json.loads(first.stdout)["feeds"]
    assert [r["status"] for r in reports] == ["ok", "error"]
    assert (reports[0]["entries"], reports[0]["sent"], reports[0]["dead_letters"]) == (3, 1, 2)

    again = newskg_json("ingest", "feeds", "--once", feed, env=configured.env)["feeds"][0]
    assert (again["status"], again["already_seen"], again["sent"], again["dead_letters"]) == ("ok", 3, 0, 0)
    options = kafka_options(configured.settings)
    letters = [DeadLetter.from_bytes(r.value) for r in read_topic(options, configured.settings.topic_dlq)]
    assert sorted((d.key, d.reason, d.stage) for d in letters) == [
        (site.base + "/empty", "empty_page", "feeds"),
        ("http://h:abc/", "invalid_url", "feeds"),
    ]
    assert len(list(read_topic(options, configured.settings.topic_articles))) == 1
    site.server.shutdown()
