"""An article re-read with earlier times (a live fetch first, the same URL backfilled later) is dated like its
chunk: by the record the system could show first, whole, whatever order the writes come in. Otherwise a fact
the backfill made visible shows with no source and no evidence on the days in between. Real FalkorDB (RESP)."""

from __future__ import annotations

import pytest

from newskg.core.ids import chunk_id, entity_id, source_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.timeaxes import day_iso, end_of_day_ms
from newskg.graph.store import explore
from newskg.graph.store.asof import AsOf
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.records import stated_by

pytestmark = pytest.mark.integration

ADA = Entity(id=entity_id("Ada Lovelace", "PERSON"), name="Ada Lovelace", type="PERSON")
BABBAGE = Entity(id=entity_id("Charles Babbage", "PERSON"), name="Charles Babbage", type="PERSON")
TEXT = "Ada Lovelace met Charles Babbage."
PUBLISHED, BACKFILLED_ON, FETCHED_ON, BETWEEN = 20230501, 20230501, 20230510, 20230505
ARTICLE = "a_lovelace_story"  # one URL, so one article id for both reads


def read_of(ingested_day: int) -> Chunk:
    """The one article as read on `ingested_day` (a backfill counts as taken in when published)."""
    ms = end_of_day_ms(ingested_day) - 3_600_000
    return Chunk(
        id=chunk_id(TEXT),
        text=TEXT,
        sentences=[TEXT],
        article_id=ARTICLE,
        article_ids=[ARTICLE],
        source="wire",
        source_id=source_id("wire"),
        url="https://wire.example/lovelace",
        title="Lovelace meets Babbage",
        day=PUBLISHED,
        published=f"{day_iso(PUBLISHED)}T08:00:00Z",
        ingested_at=f"{day_iso(ingested_day)}T23:00:00Z",
        ingested_ms=ms,
        sentence_start=0,
        sentence_end=1,
    )


def stated_in(chunk: Chunk) -> Interaction:
    return stated_by(chunk, ADA, BABBAGE, "Ada Lovelace met Charles Babbage", PUBLISHED)


def write(store: GraphStore, *chunks: Chunk) -> None:
    store.write_batch(
        chunks=chunks,
        entities=[ADA, BABBAGE],
        mentions=[(chunks[0].id, ADA.id), (chunks[0].id, BABBAGE.id)],
        interactions=[stated_in(c) for c in chunks],
    )


@pytest.mark.parametrize("order", ["live first", "backfill first", "one batch"])
def test_a_backfilled_article_is_dated_like_its_chunk_and_its_fact(isolated, order):
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    reads = [read_of(FETCHED_ON), read_of(BACKFILLED_ON)]
    if order == "one batch":  # rows of one statement do not see each other's writes: folded first
        write(store, *reversed(reads))  # the later read last: a plain dict would keep it
    for chunk in reads if order == "live first" else reversed(reads) if order == "backfill first" else []:
        write(store, chunk)

    between = AsOf(BETWEEN)
    [edge] = explore.neighbourhood(store, ADA.id, between, explore.Window(PUBLISHED, BETWEEN), 10)
    assert edge.n_sources == 1, "the fact shown as of the day has the source that reported it by then"
    [evidence] = explore.evidence(store, edge.id, between)
    assert evidence.url == "https://wire.example/lovelace"
    [row] = store.timeline(ADA.id, PUBLISHED, BETWEEN, as_of=BETWEEN)
    assert row.sources == ["wire"]
    [article] = store.conn.read(
        "MATCH (a:Article {id: $id}) RETURN a.published_day AS day, a.ingested_ms AS ms", {"id": ARTICLE}
    )
    assert article == {"day": PUBLISHED, "ms": read_of(BACKFILLED_ON).ingested_ms}
