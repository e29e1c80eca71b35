"""feedparser's untyped result read into typed records at the seam (ingest/sources/feeds.py parse_feed)."""

from newskg.ingest.sources.feeds import FeedEntry, parse_feed

RSS = b"""<?xml version="1.0"?>
<rss version="2.0"><channel><title>Harbour News</title>
<item><title>Ferry line approved</title><link>https://harbour.example/ferry</link>
<pubDate>Mon, 04 Mar 2024 09:30:00 +0100</pubDate></item>
<item><title>No link here</title></item>
</channel></rss>"""


def test_a_feed_becomes_typed_entries_with_utc_dates():
    feed = parse_feed(RSS)
    assert feed.title == "Harbour News"
    assert feed.entries == [
        FeedEntry("https://harbour.example/ferry", "Ferry line approved", "2024-03-04T08:30:00Z"),
        FeedEntry(None, "No link here", None),
    ]


def test_what_is_not_a_feed_has_no_entries():
    feed = parse_feed(b"\x00\x01 not xml")
    assert feed.title is None and feed.entries == []
