"""Issue #28's adversarial corpus (tests/support/adversarial.py, seeded) through the real broker, FalkorDB and the
Qdrant mirror, with the process and extract stages running as their own processes (`newskg run process`,
`newskg run extract`), files through `newskg ingest files`, and a feed served over HTTP.

Review findings it covers, each a class of 20+ generated cases mixed with good articles:
- review finding: "A stage exits on one bad record, and crash-loops on redelivery" — text over spaCy's
  `max_length`, 5,000-digit integers, integers outside 64 bits, NaN/Infinity, lone surrogates, invalid or deeply
  nested JSON on the articles and the chunks topics, chunks the graph refuses.
- review finding: "Input that vanishes without a dead letter" — empty `.html`/`.txt` files, corrupt `.gz`, JSONL
  lines whose URL has a bad port, NUL bytes in the text; feed entries whose link does not parse or whose page is
  empty.
- review finding: "DNS rebinding … a fetcher that cannot be turned inward" — feed entries (and redirects) to
  private, loopback, link-local and other non-public addresses: nothing is fetched from them.
- review finding: "`extract stats` counters … are incremented before the commit and again on each redelivery".

What "a second run changes nothing" means here, decided:
- Re-send (the same files ingested again, the same feed polled again, the same raw messages produced again):
  the graph (every node and relationship with its properties), the mirror and `extract stats` are unchanged. A
  feed entry that was dead-lettered is remembered and never dead-lettered again. A bad file or line, and a bad
  message produced again, is new input: it gets one new dead letter per send (the files source keeps no memory of
  files; a message is identified by its offset).
- Redelivery (the same messages read again from offset 0, as after a crash between write and commit or an offset
  reset; here a fresh consumer group of the same stages on the same topics): the graph, the mirror and `extract
  stats` are unchanged, and no dead letter says anything new: a redelivered bad message is dead-lettered again as
  an exact copy of its first letter (same stage, topic, partition, offset, key, reason, detail and excerpt; only
  the time `at` differs). Dead letters are at-least-once like every other output of a stage (they go out in the
  same acknowledged write as the chunks, before the commit); a reader of `news.dlq` counts a stage's letters by
  origin (topic, partition, offset). The sources, which do not run again, add none.

The "public" site is 127.0.0.2 (no public server is reachable from a test): `non_public_reason` is told that
this one loopback address is public, everything else goes through the real check with
NEWSKG_FETCH_ALLOW_PRIVATE=false. The private site listens on 127.0.0.1, on the same port, and must receive no
request at all."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from newskg.core.records import DeadLetter, DedupRelease, decode_any
from newskg.core.settings import Settings
from newskg.feeds import poll_once
from newskg.graph.mirror.base import VectorMirror
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.admin import TopicAdmin
from newskg.ingest.kafka.producer import RecordProducer
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.sources import http
from newskg.pipeline import ensure_topics
from newskg.wiring import graph_uri, kafka_bootstrap, kafka_options, new_mirror, open_graph
from tests.support.adversarial import DAY, FEEDS, STOPS, VANISHES, Case, Corpus, generate
from tests.support.cli import newskg_json
from tests.support.graph_dump import graph_dump
from tests.support.isolation import Isolated
from tests.support.processes import StageProcess, wait_while_stages_run
from tests.support.sites import Site

pytestmark = pytest.mark.integration

SEED = 28
PUBLIC_STAND_IN = "127.0.0.2"
ORIGIN = ("stage", "topic", "partition", "offset", "key", "reason", "detail", "payload_excerpt", "payload_bytes")


def letters(
    settings: Settings, after: dict[tuple[int, int], DeadLetter] | None = None
) -> dict[tuple[int, int], DeadLetter]:
    """The dead letters by (partition, offset); only those not in `after`."""
    records = read_topic(kafka_options(settings), settings.topic_dlq)
    found = {(r.partition, r.offset): DeadLetter.from_bytes(r.value or b"") for r in records}
    return {at: letter for at, letter in found.items() if at not in (after or {})}


def by_case(found: list[DeadLetter], cases: list[Case]) -> tuple[dict[str, list[str]], list[str]]:
    """Each letter given to the one bad case of its stage whose needle its key or excerpt holds: case name → the
    reasons of its letters; and the letters that name no case, or more than one."""
    got: dict[str, list[str]] = {c.name: [] for c in cases if c.bad}
    strays = []
    for letter in found:
        text = f"{letter.key or ''}\n{letter.payload_excerpt}"
        names = [c.name for c in cases if c.bad and c.stage == letter.stage and c.needle in text]
        if len(names) == 1:
            got[names[0]].append(letter.reason)
        else:
            strays.append(f"{letter.stage}/{letter.reason} {letter.key!r} matches {names}: {letter.detail[:200]}")
    return got, strays


def chunk_texts(settings: Settings) -> dict[str, str]:
    with open_graph(settings) as conn:
        return {
            r["id"]: r["t"]
            for r in conn.read("MATCH (c:Chunk) WHERE c.text IS NOT NULL RETURN c.id AS id, c.text AS t")
        }


@contextlib.contextmanager
def mirror_of(settings: Settings) -> Iterator[VectorMirror]:
    """The stage's mirror folder, opened to read in this process (no stage may hold it meanwhile)."""
    mirror = new_mirror(settings, embedder=cast(Any, None))
    try:
        yield mirror
    finally:
        mirror.close()


def snapshot(settings: Settings, env: dict[str, str]) -> dict[str, Any]:
    """What a second run must not change: the whole graph, the mirror's points and time payloads, extract stats."""
    with open_graph(settings) as conn:
        dump = graph_dump(conn)
        counts = GraphStore(conn).counts()
        interactions = {r["id"] for r in conn.read("MATCH (i:Interaction) RETURN i.id AS id")}
        variants = {r["v"] for r in conn.read("MATCH (i:Interaction) RETURN DISTINCT i.variant AS v")}
    with mirror_of(settings) as mirror:
        payloads = {name: mirror.time_payloads(name) for name in ("chunks", "interactions")}
    for points in payloads.values():
        for payload in points.values():
            payload.pop("mirrored_ms", None)  # when it was (re)mirrored: a redelivery may re-mirror
    return {
        "dump": dump,
        "counts": counts,
        "chunks": set(chunk_texts(settings)),
        "interactions": interactions,
        "variants": variants,
        "mirror": payloads,
        "extract_stats": newskg_json("extract", "stats", env=env),
    }


def stage_stats(stage: StageProcess) -> dict[str, Any]:
    """The JSON a stopped `newskg run … --json` printed last."""
    text = stage.output()
    return json.JSONDecoder().raw_decode(text, text.rindex('{\n  "stages"'))[0]["stages"]


def write_files(corpus: Corpus, folder: Path) -> Path:
    folder.mkdir()
    for name, content in corpus.files.items():
        (folder / name).write_bytes(content)
    return folder


@pytest.fixture
def sites(corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Site, Site]]:
    """(public, private): the feed and its pages on the public stand-in, and a private site on loopback at the
    same port, which records every request (and must get none)."""
    private = Site("127.0.0.1")
    public = Site(PUBLIC_STAND_IN, private.port)
    public.routes = corpus.site(public.base, private.base)
    real = http.non_public_reason
    monkeypatch.setattr(http, "non_public_reason", lambda a: None if str(a) == PUBLIC_STAND_IN else real(a))
    yield public, private
    public.close()
    private.close()


@pytest.fixture
def corpus() -> Corpus:
    return generate(SEED)


def ingest_sources(corpus: Corpus, settings: Settings, env: dict[str, str], folder: Path, public: Site, private: Site):
    """Every source once: raw messages onto both topics, `ingest files` on the folder, one poll of the feed (and
    of a feed URL on the private site, which is refused). Returns the files' and the feeds' reports."""
    producer = RecordProducer(kafka_options(settings))
    try:
        producer.send_all(settings.topic_articles, list(corpus.articles))
        producer.send_all(settings.topic_chunks, list(corpus.chunks))
    finally:
        producer.close()
    files = newskg_json("ingest", "files", str(folder), "--date", DAY, "--source", "adversarial-files", env=env)
    feeds = poll_once(settings, [public.base + "/feed.xml", private.base + "/feed.xml"])
    return files, feeds


@pytest.mark.timeout(1200)  # 496 s on a busy machine (load 4-13, 2026-11-27): under half of it
def test_review_findings_an_adversarial_corpus_stops_no_stage_and_every_bad_item_is_one_dead_letter(
    stack, isolated: Isolated, tmp_path: Path, corpus: Corpus, sites: tuple[Site, Site]
):
    public, private = sites
    world = isolated.configured(
        data_dir=tmp_path / "data",  # this test's own LLM ledger (`extract stats`) and feed state
        kafka_bootstrap=kafka_bootstrap(stack.settings),
        graph_uri=graph_uri(stack.settings),
        fetch_allow_private=False,
        fetch_min_interval_s=0.0,
    )
    env, settings = world.env, world.settings
    ensure_topics(settings)
    folder = write_files(corpus, tmp_path / "files")
    bad = [c for c in corpus.cases if c.bad]
    by_stage = Counter(c.stage for c in bad)
    sent_to_articles = len(corpus.articles)

    # --- Run 1: both stages running as processes while the sources send the corpus.
    process = StageProcess(["run", "process", "--json"], env)
    extract = StageProcess(["run", "extract", "--json"], env)
    admin = TopicAdmin(kafka_options(settings))
    try:
        files, feeds = ingest_sources(corpus, settings, env, folder, public, private)
        sent_to_articles += files["sent"] + feeds[0].sent
        assert files["failed"] == [] and files["dead_letters"] == by_stage["files"]
        assert [r.status for r in feeds] == ["ok", "error"] and "refused_target" in feeds[1].errors[0]
        # sent on: the good pages, and those the process stage refuses (no main text)
        sent_on = sum(c.stage in (None, "process") for c in corpus.of(FEEDS))
        assert (feeds[0].dead_letters, feeds[0].sent) == (by_stage["feeds"], sent_on)

        def idle() -> bool:  # the articles first: once they are all committed, the chunks topic is complete
            return (
                admin.group_lag(settings.consumer_group("process"), settings.topic_articles) == 0
                and admin.group_lag(settings.consumer_group("extract"), settings.topic_chunks) == 0
            )

        wait_while_stages_run(idle, 400, "both stages caught up", [process, extract])
        assert process.proc.poll() is None and extract.proc.poll() is None  # no stage exited
        assert process.stop() == 0 and extract.stop() == 0, process.output()[-2000:] + extract.output()[-2000:]
    finally:
        for stage in (process, extract):
            if stage.proc.poll() is None:
                stage.kill()
        admin.close()
    assert private.requests == []  # nothing fetched from a private address, robots.txt included
    # ... while every page of the public site was asked for once: the redirects to private targets were followed
    # up to the hop that was refused, the empty pages were read.
    assert Counter(public.paths()) == Counter([*corpus.routes, "/robots.txt", "/feed.xml"])

    # Every bad item is exactly one dead letter, with its reason code; nothing else is in the DLQ.
    first = letters(settings)
    got, strays = by_case(list(first.values()), corpus.cases)
    assert strays == []
    assert got == {c.name: [c.reason] for c in bad}
    assert all(sum(c.bad for c in corpus.of(cls)) >= 20 for cls in (STOPS, VANISHES, FEEDS))
    # A chunk the extract stage dead-lettered let go of its dedup signature, in the same write.
    entries = [decode_any(r.value or b"") for r in read_topic(kafka_options(settings), settings.topic_dedup)]
    released = {e.chunk_id for e in entries if isinstance(e, DedupRelease)}
    assert released == {c.releases for c in bad if c.releases}

    # Every good item is in the graph, and the graph and the mirror hold the same chunks and interactions.
    texts = chunk_texts(settings)
    good = [c for c in corpus.cases if not c.bad]
    assert [c.name for c in good if not any(c.needle in t for t in texts.values())] == []
    assert not any("\x00" in t or any("\ud800" <= ch <= "\udfff" for ch in t) for t in texts.values())
    state = snapshot(settings, env)
    assert state["mirror"]["chunks"].keys() == state["chunks"] and len(state["chunks"]) == state["counts"]["chunks"]
    assert state["mirror"]["interactions"].keys() == state["interactions"] and state["interactions"]
    counts = newskg_json("graph", "stats", env=env)
    assert counts["mirror"] == {"chunks": counts["chunks"], "interactions": counts["interactions"]}

    # `extract stats` equals what the graph holds: M0 is offline, so every interaction is an M0 fact and the
    # ledger holds no call, no cached answer, no failure and no counter (nothing counted for work not committed).
    assert state["variants"] == {"M0"}
    stats = state["extract_stats"]
    assert set(stats["totals"].values()) == {0} and stats["counters"] == {} and stats["by_prompt"] == []
    # The stages' own counts, printed when they stopped, are what the topics and the DLQ hold.
    ran = {**stage_stats(process), **stage_stats(extract)}
    chunk_messages = len(read_topic(kafka_options(settings), settings.topic_chunks))
    assert ran["process"]["consumed"] == sent_to_articles
    assert ran["process"]["produced"] == chunk_messages - len(corpus.chunks)
    assert ran["process"]["dead"] == by_stage["process"]
    assert ran["extract"]["consumed"] == chunk_messages
    # (what it produced: the dedup releases and the linking log's entries, a journal per chunk it wrote)
    logged = len(read_topic(kafka_options(settings), settings.topic_linking))
    assert (ran["extract"]["dead"], ran["extract"]["produced"]) == (by_stage["extract"], len(released) + logged)

    # --- Run 2: the same corpus sent again through every source; the stages run until idle.
    requested = Counter(public.paths())
    files, feeds = ingest_sources(corpus, settings, env, folder, public, private)
    assert (feeds[0].status, feeds[0].already_seen, feeds[0].sent, feeds[0].dead_letters) == (
        "ok",
        len(corpus.feed_links),
        0,
        0,
    )
    assert Counter(public.paths()) - requested == Counter({"/feed.xml": 1, "/robots.txt": 1})  # no entry again
    process_run = newskg_json("run", "process", "--until-idle", env=env)["stages"]["process"]
    extract_run = newskg_json("run", "extract", "--until-idle", env=env)["stages"]["extract"]
    assert process_run["dead"] == by_stage["process"] - sum(c.stage == "process" for c in corpus.of(FEEDS))
    assert extract_run["dead"] == by_stage["extract"]
    assert snapshot(settings, env) == state  # graph, mirror and extract stats unchanged
    resent = letters(settings, after=first)
    got, strays = by_case(list(resent.values()), corpus.cases)
    assert strays == []
    once_more = {c.name: [c.reason] for c in bad if c.cls != FEEDS}  # a feed entry is remembered
    assert got == {c.name: once_more.get(c.name, []) for c in bad}

    # --- Run 3: a redelivery of every message so far (a fresh group of the same stages reads from offset 0).
    before = letters(settings)
    redelivered = world.configured(group_prefix=f"{world.prefix}-redelivered")
    process_run = newskg_json("run", "process", "--until-idle", env=redelivered.env)["stages"]["process"]
    extract_run = newskg_json("run", "extract", "--until-idle", env=redelivered.env)["stages"]["extract"]
    assert snapshot(settings, env) == state
    copies = letters(settings, after=before).values()
    stage_letters = [d for d in before.values() if d.stage in ("process", "extract")]
    assert Counter(tuple(getattr(d, f) for f in ORIGIN) for d in copies) == Counter(
        tuple(getattr(d, f) for f in ORIGIN) for d in stage_letters
    )
    assert process_run["dead"] + extract_run["dead"] == len(stage_letters)
    assert private.requests == []
