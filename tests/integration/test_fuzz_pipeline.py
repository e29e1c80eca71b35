"""A batch of fuzzed bad payloads (tests/support/fuzz.py, drawn deterministically) then good ones, through the real
broker and the real process and extract stages (`newskg run all`): every bad message is in the DLQ with the reason
the stage gives it in isolation, none crashed a stage, and the good article sent after them is in the graph."""

from __future__ import annotations

import pytest
from hypothesis import given

from newskg.core.records import DeadLetter, RawArticle
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.process.article import raw_article_id
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.stage import ProcessStage
from newskg.pipeline import ensure_topics
from newskg.wiring import kafka_options, open_graph
from tests.support.cli import newskg_json
from tests.support.fuzz import FUZZ, MAX_PAGE_BYTES, REASONS, bad_payloads, consumer_record
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration

GOOD = RawArticle(
    url="https://good.example/after-the-bad-ones",
    text="Doja Cat met Jared Leto at the Met Gala in New York on Monday. Anna Wintour praised the theme.",
    source="good",
    fetched_at="2023-05-02T12:00:00Z",
    published="2023-05-01",
)


def drawn_payloads() -> list[bytes]:
    """FUZZ's examples of bad payloads, the same on every run (derandomised), collected rather than asserted on."""
    drawn: list[bytes] = []

    @FUZZ
    @given(payload=bad_payloads)
    def collect(payload: bytes) -> None:
        drawn.append(payload)

    collect()
    return drawn


def reason_in_isolation(settings, payload: bytes) -> str | None:
    """The dead-letter reason the process stage gives the payload on its own; None if it is an article after all."""
    stage = ProcessStage(settings, DedupIndex(0.7, settings.dedup_num_perm), None)
    output = stage.handle([consumer_record("news.articles", payload, 0)])
    return output.dead[0].reason if output.dead else None


@pytest.mark.timeout(900)
def test_fuzzed_bad_input_is_dead_lettered_and_the_good_article_after_it_lands_in_the_graph(isolated: Isolated):
    world = isolated.configured(max_page_bytes=MAX_PAGE_BYTES)
    env, settings, names = world.env, world.settings, world.topics
    ensure_topics(settings)
    payloads = drawn_payloads()
    expected = {f"bad-{n}": reason_in_isolation(settings, p) for n, p in enumerate(payloads)}
    bad = {key: reason for key, reason in expected.items() if reason}
    assert len(bad) >= 20  # most of the drawn payloads are bad input (a few are valid articles)
    # Also straight onto the chunks topic, for the extract stage: bytes, JSON of other kinds, deep nesting.
    chunk_garbage = [p for p in payloads[:15] if not p.startswith(b'{"kind": "Chunk')]
    producer = RecordProducer(kafka_options(settings))
    try:
        producer.send_all(names["articles"], [(f"bad-{n}", p) for n, p in enumerate(payloads)] + [("good", GOOD)])
        producer.send_all(names["chunks"], [(f"chunk-bad-{n}", p) for n, p in enumerate(chunk_garbage)])
    finally:
        producer.close()

    stages = newskg_json("run", "all", "--until-idle", env=env)["stages"]
    assert stages["process"]["consumed"] == len(payloads) + 1

    letters = [DeadLetter.from_bytes(r.value or b"") for r in read_topic(kafka_options(settings), names["dlq"])]
    processed = {d.key: d for d in letters if d.stage == "process"}
    assert {key: d.reason for key, d in processed.items()} == bad
    extracted = {d.key: d for d in letters if d.stage == "extract"}
    assert set(extracted) == {f"chunk-bad-{n}" for n in range(len(chunk_garbage))}
    assert all(d.reason in REASONS and d.detail for d in letters)

    with open_graph(settings) as conn:
        rows = conn.read("MATCH (c:Chunk) RETURN c.article_id AS a")
    assert raw_article_id(GOOD) in {r["a"] for r in rows}  # the good article, sent last, was extracted
    assert newskg_json("run", "all", "--until-idle", env=env)["stages"]["process"]["consumed"] == 0  # committed
