"""A redelivered article record re-emits what it emitted; a re-ingested article (another record: another ingestion
instant) emits nothing (ingest/process/dedup.py `Decision`). A broker that loses acknowledged writes together with
the commit (noida-db after a kill -9) redelivers the record to a process stage that kept running: before, its
dedup index answered "again" and the article's chunks were lost for good."""

from __future__ import annotations

from newskg.core.records import DedupSighting, DedupSignature, RawArticle, decode_any
from newskg.core.settings import Settings
from newskg.ingest.kafka.client import ConsumerRecord
from newskg.ingest.process.dedup import DedupIndex
from newskg.ingest.process.stage import DedupLogEntries, ProcessStage
from tests.support.fuzz import consumer_record

STORY = (
    "The harbour council approved a new ferry line on Monday after a long debate. Boats will run every hour from "
    "May, the council said. Residents had asked for the service for years, and the mayor called it a turning point "
    "for the island. The first boat leaves the old pier at six in the morning."
)
RETOLD = STORY.replace("long debate", "lengthy debate").replace("for years", "for many years")


def record(url: str, text: str, fetched_at: str = "2024-03-01T08:00:00Z", offset: int = 0) -> ConsumerRecord:
    raw = RawArticle(url=url, text=text, source="wire", fetched_at=fetched_at, published="2024-03-01")
    return consumer_record("news.articles", raw.to_bytes(), offset)


def emitted(stage: ProcessStage, message: ConsumerRecord) -> tuple[list[str], DedupLogEntries]:
    output = stage.handle([message])
    assert output.dead == () and isinstance(output.after_ack, DedupLogEntries)
    return [m.record.to_json() for m in output.messages], output.after_ack


def test_a_redelivered_record_emits_its_chunks_and_sightings_again_and_a_reingest_emits_nothing():
    settings = Settings(_env_file=None)
    stage = ProcessStage(settings, DedupIndex(0.7, settings.dedup_num_perm), None)
    first, _ = emitted(stage, record("https://a.example/ferry", STORY))
    retold, logged = emitted(stage, record("https://b.example/ferry", RETOLD))
    assert any('"ChunkSighting"' in m for m in retold) and logged.sighted  # a near-duplicate of the first

    assert emitted(stage, record("https://a.example/ferry", STORY))[0] == first  # redelivered: the same messages
    again, log_again = emitted(stage, record("https://b.example/ferry", RETOLD))
    assert again == retold  # the sighting too, with the similarity it stated
    assert log_again.kept == () and log_again.sighted == ()  # nothing logged twice

    later = "2024-03-02T08:00:00Z"  # the same pages ingested again: other records
    assert emitted(stage, record("https://a.example/ferry", STORY, later))[0] == []
    assert emitted(stage, record("https://b.example/ferry", RETOLD, later))[0] == []


def test_the_record_that_emitted_an_entry_survives_the_dedup_log():
    """A restarted process stage rebuilds its index from the log: the entries carry the emitting record's
    ingestion instant (and a sighting its similarity), so a redelivery after the restart still re-emits."""
    index = DedupIndex(0.7, 128)
    mh = index.signer.sign(STORY)
    signature = DedupSignature(
        chunk_id="c1", article_id="a1", num_perm=128, minhash=index.signer.encode(mh), day=20240301, ingested_ms=5
    )
    sighting = DedupSighting(
        chunk_id="c2", article_id="a2", kept_chunk_id="c1", day=20240301, ingested_ms=7, similarity=0.81
    )
    rebuilt = DedupIndex(0.7, 128)
    kept = decode_any(signature.to_bytes())
    assert isinstance(kept, DedupSignature)
    rebuilt.load(kept.chunk_id, kept.article_id, rebuilt.signer.decode_values(kept.minhash), kept.day, kept.ingested_ms)
    seen = decode_any(sighting.to_bytes())
    assert isinstance(seen, DedupSighting)
    rebuilt.add_sighting(
        seen.article_id, seen.chunk_id, seen.kept_chunk_id, seen.day, seen.ingested_ms, seen.similarity
    )

    assert rebuilt.decide("c1", "a1", mh, ingested_ms=5).kind == "resend"
    assert rebuilt.decide("c1", "a1", mh, ingested_ms=6).kind == "again"
    resent = rebuilt.decide("c2", "a2", mh, ingested_ms=7)
    assert (resent.kind, resent.sighting_of, resent.similarity) == ("resend", "c1", 0.81)
    assert rebuilt.decide("c2", "a2", mh, ingested_ms=8).kind == "again"
    old = DedupIndex(0.7, 128)  # an entry logged before the instant was: never a redelivery
    old.load("c1", "a1", old.signer.decode_values(signature.minhash), 20240301)
    assert old.decide("c1", "a1", mh, ingested_ms=5).kind == "again"
