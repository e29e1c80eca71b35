"""Sources never stop on one bad item: an unusable feed entry or file (or JSONL line) is exactly one dead letter
with its reason code, and the poll or run goes on. Feeds against a real HTTP server on loopback; the producer is a
recorder (the same through the real broker: tests/integration/test_feeds.py, test_ingest_pipeline.py)."""

from __future__ import annotations

import gzip
import json
import threading
import tracemalloc
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from newskg.core.records import DeadLetter, RawArticle, Record
from newskg.ingest.publish import ArticlePublisher
from newskg.ingest.sources.feed_state import FeedState
from newskg.ingest.sources.feeds import FeedPoller
from newskg.ingest.sources.files import read_file
from newskg.ingest.sources.http import PoliteFetcher

NOW = "2024-03-01T08:00:00Z"
PAGE = b"<html><body><article><p>A council approved the new tram line on Monday.</p></article></body></html>"


class Recorder:
    """Stands in for the producer: what was sent to which topic."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str | None, Record | bytes]] = []

    def send_all(self, topic: str, items: Sequence[tuple[str | None, Record | bytes]]) -> None:
        self.sent += [(topic, key, value) for key, value in items]

    def send(self, topic: str, key: str | None, value: Record | bytes) -> Done:
        self.sent.append((topic, key, value))
        return Done()

    def flush(self) -> None:
        pass

    def on(self, topic: str) -> list[Record | bytes]:
        return [value for sent_to, _, value in self.sent if sent_to == topic]


class Done:
    def get(self, timeout: float) -> None:
        pass


@pytest.fixture
def feed_site() -> Iterator[dict[str, object]]:
    site: dict[str, object] = {"requests": []}
    requests: list[str] = site["requests"]  # type: ignore[assignment]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            requests.append(self.path)
            status, body = {
                "/robots.txt": (404, b""),
                "/feed.xml": (200, site["feed"]),
                "/empty200": (200, b""),
                "/empty204": (204, b""),
                "/good": (200, PAGE),
            }.get(self.path, (404, b"not found"))
            self.send_response(status)
            if status != 204:
                self.send_header("Content-Length", str(len(body)))  # type: ignore[arg-type]
            self.end_headers()
            self.wfile.write(body)  # type: ignore[arg-type]

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    links = ["http://h:abc/", "http://[::1/", "http://h:99999/", f"{base}/empty200", f"{base}/empty204", f"{base}/good"]
    items = "".join(f"<item><title>Story {i}</title><link>{link}</link></item>" for i, link in enumerate(links))
    site["feed"] = f'<?xml version="1.0"?><rss version="2.0"><channel><title>T</title>{items}</channel></rss>'.encode()
    site["base"] = base
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield site
    server.shutdown()
    server.server_close()


def test_a_bad_link_or_an_empty_page_is_one_dead_letter_and_later_polls_skip_it(feed_site, tmp_path):
    """review finding: feeds — an entry link such as `http://h:abc/` (ValueError from `urlsplit().port`) or a
    200/204 with an empty body aborted the whole poll, was neither dead-lettered nor marked seen, so every later
    poll died at the same entry."""
    base = feed_site["base"]
    producer = Recorder()
    state = FeedState(tmp_path / "state.sqlite")
    poller = FeedPoller(PoliteFetcher("t", 5, 0, 100_000, allow_private=True), state, producer, "articles", "dlq")

    report = poller.poll(f"{base}/feed.xml")
    assert (report.status, report.entries, report.sent, report.dead_letters) == ("ok", 6, 1, 5)
    letters = {d.key: d.reason for d in producer.on("dlq") if isinstance(d, DeadLetter)}
    assert letters == {
        "http://h:abc/": "invalid_url",
        "http://[::1/": "invalid_url",
        "http://h:99999/": "invalid_url",
        f"{base}/empty200": "empty_page",
        f"{base}/empty204": "empty_page",
    }
    assert all(d.stage == "feeds" and d.detail for d in producer.on("dlq") if isinstance(d, DeadLetter))
    [article] = producer.on("articles")
    assert isinstance(article, RawArticle) and article.url == f"{base}/good"

    again = poller.poll(f"{base}/feed.xml")  # no validators on this feed: fetched again, every entry known
    assert (again.status, again.already_seen, again.sent, again.dead_letters) == ("ok", 6, 0, 0)
    assert len(producer.sent) == 6
    state.close()


def write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def items_of(paths: list[Path], max_bytes: int = 100_000) -> list:
    return [item for path in paths for item in read_file(path, "src", None, NOW, max_bytes=max_bytes)]


def reasons(items: list) -> list[tuple[str, str]]:
    return [(Path(i.origin).name, i.value.reason) for i in items if isinstance(i.value, DeadLetter)]


def test_empty_or_corrupt_files_are_dead_letters_and_the_run_goes_on(tmp_path):
    """review finding: files — an empty `.html`/`.txt` or a corrupt `.gz` (`zlib.error` is no `OSError`; a
    truncated one raises EOFError) aborted `ingest files` mid-run: that file and every later one was neither sent
    nor dead-lettered."""
    good = gzip.compress(PAGE)
    damaged = good[:10] + bytes(b ^ 0x5A for b in good[10:-8]) + good[-8:]  # a deflate stream zlib rejects
    paths = [
        write(tmp_path / "a_empty.html", b""),
        write(tmp_path / "b_blank.txt", b" \n\t\n"),
        write(tmp_path / "c_not_gzip.html.gz", b"plain text, not gzip"),
        write(tmp_path / "d_damaged.html.gz", damaged),
        write(tmp_path / "e_truncated.html.gz", good[: len(good) // 2]),
        write(tmp_path / "f_good.html.gz", good),
        write(tmp_path / "g_good.txt", b"A plain text article about the tram line."),
    ]
    items = items_of(paths)
    assert reasons(items) == [
        ("a_empty.html", "empty_file"),
        ("b_blank.txt", "empty_file"),
        ("c_not_gzip.html.gz", "corrupt_gzip"),
        ("d_damaged.html.gz", "corrupt_gzip"),
        ("e_truncated.html.gz", "corrupt_gzip"),
    ]
    assert [Path(i.origin).name for i in items if isinstance(i.value, RawArticle)] == ["f_good.html.gz", "g_good.txt"]
    assert all(i.value.stage == "files" and i.value.detail for i in items if isinstance(i.value, DeadLetter))


def test_a_jsonl_line_with_a_bad_port_or_over_the_cap_is_a_dead_letter_and_the_next_line_goes_on(tmp_path):
    """review finding: files — a JSONL line whose URL has a bad port (ValueError from the canonical URL) aborted
    the run."""
    lines = [
        {"url": "http://h:abc/x", "text": "Bad port."},
        {"url": "https://ex.com:99999/y", "text": "Port out of range."},
        {"url": "https://ex.com/long", "text": "x" * 2_000},
        {"url": "https://ex.com/ok", "text": "A good line."},
    ]
    data = b"\n".join(json.dumps(line).encode() for line in lines) + b"\n"
    plain = write(tmp_path / "a.jsonl", data)
    packed = write(tmp_path / "b.jsonl.gz", gzip.compress(data))
    for path in (plain, packed):
        items = items_of([path], max_bytes=1_000)
        letters = [(i.origin.rsplit(":", 1)[1], i.value.reason) for i in items if isinstance(i.value, DeadLetter)]
        assert letters == [("1", "invalid_url"), ("2", "invalid_url"), ("3", "too_large")]
        assert [i.value.url for i in items if isinstance(i.value, RawArticle)] == ["https://ex.com/ok"]
        assert "Bad port" in items[0].value.payload_excerpt


def test_a_gzip_bomb_is_stopped_at_the_cap_without_inflating_it(tmp_path):
    """review finding: unbounded decompression — `gzip.decompress` of a `.gz` file inflated all of it before any
    size check; it is now read in a stream and stopped at NEWSKG_MAX_PAGE_BYTES."""
    bomb = write(tmp_path / "bomb.html.gz", gzip.compress(b" " * 40_000_000, compresslevel=9))
    tracemalloc.start()
    try:
        [item] = items_of([bomb], max_bytes=100_000)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert isinstance(item.value, DeadLetter) and item.value.reason == "too_large"
    assert peak < 8_000_000


def test_the_publisher_sends_a_source_s_dead_letters_to_the_dead_letter_topic(tmp_path):
    """review finding: files — a rejected file reaches the dead-letter topic (once), the good ones the articles."""
    paths = [write(tmp_path / "a.html", b""), write(tmp_path / "b.txt", b"A plain text article.")]
    producer = Recorder()
    report = ArticlePublisher(producer, "articles", "dlq").publish(items_of(paths))  # type: ignore[arg-type]
    assert (report.sent, report.dead_letters, report.failed) == (1, 1, [])
    assert [type(v).__name__ for v in producer.on("dlq")] == ["DeadLetter"]
    assert [type(v).__name__ for v in producer.on("articles")] == ["RawArticle"]
    no_dlq = ArticlePublisher(producer, "articles").publish(items_of(paths))  # type: ignore[arg-type]
    assert no_dlq.sent == 1 and [origin for origin, _ in no_dlq.failed] == [str(paths[0])]
