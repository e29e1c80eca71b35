"""The order the process stage decides its articles in: ingestion instant, then partition and offset.

Its dedup keeps the first of a near-duplicate group it meets, and its window's clock is the newest publication day it
has met (ingest/process/dedup.py): both read the order of the articles. Handed them as polled, one consumer's
fetch timing chose that order (which partition's batch came back first), and so which copy was kept, and which
articles fell out of the window because another partition was read ahead: two runs of the demo kept 1009 and 1008
chunks. Behind the ingestion-order gate (ingest/kafka/ingestion_order.py), with each batch merged by these keys,
the order is one function of the articles topic, so the kept set is too: of a near-duplicate group, the chunk
ingested first (a backfill: published first) is kept, and the same articles sent in another order across the
partitions give the same chunks and sightings.

The key needs the article's ingestion instant, which a backfilled page gets from its main text's date: the article
built for the key is kept (`ArticleOrder.article`) so the stage does not build it twice."""

from __future__ import annotations

from collections import OrderedDict

from newskg.core.records import Article, RawArticle
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.kafka.ingestion_order import EARLIEST, OrderKey
from newskg.ingest.process.article import build_article
from newskg.ingest.process.guards import Rejected, check_size, looks_binary

# Articles built for a key and not handled yet: the gate's buffers (256 a partition) and one peek ahead (a fetch).
KEPT_ARTICLES = 2048

_Place = tuple[str, int, int]


class ArticleOrder:
    """Order keys of article records, and the articles built to find them."""

    def __init__(self, max_page_bytes: int):
        self.max_page_bytes = max_page_bytes
        self._built: OrderedDict[_Place, Article | Exception] = OrderedDict()

    def key(self, record: ConsumerRecord) -> OrderKey:
        """(the article's ingestion instant, partition, offset); EARLIEST for a record the stage will dead-letter."""
        built = self._build(record)
        instant = built.ingested_ms if isinstance(built, Article) else EARLIEST
        return (instant, record.partition, record.offset)

    def article(self, record: ConsumerRecord) -> Article:
        """The record's article (built once, for its key or now), or the reason it has none, raised."""
        built = self._build(record)
        self._built.pop(_place(record), None)  # handled: a redelivery builds it again
        if isinstance(built, Exception):
            raise built
        return built

    def _build(self, record: ConsumerRecord) -> Article | Exception:
        place = _place(record)
        built = self._built.get(place)
        if built is None:
            built = self._built[place] = _try_article(record, self.max_page_bytes)
            while len(self._built) > KEPT_ARTICLES:
                self._built.popitem(last=False)
        return built


def _place(record: ConsumerRecord) -> _Place:
    return (record.topic, record.partition, record.offset)


def _try_article(record: ConsumerRecord, max_page_bytes: int) -> Article | Exception:
    """The article, or what refused it (the stage dead-letters it; only `Exception`s: a stop propagates)."""
    try:
        if record.value is None:
            raise Rejected("empty_message", "the message has no value")
        check_size(record.value, max_page_bytes)
        if looks_binary(record.value):
            raise Rejected("binary_payload", "the message is binary, not a JSON record")
        return build_article(RawArticle.from_bytes(record.value))
    except Exception as exc:
        return exc
