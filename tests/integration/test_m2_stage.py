"""M2 on the real broker and FalkorDB, with a scripted OpenAI-compatible endpoint (the real wire path against
llama.cpp is test_extract_stage.py::test_m2_pairs_batches_from_the_graph_over_the_real_llm_server):

- a line the model cites only from the day-20 chunk is not visible as of day 1 on the graph's read path;
- a remainder shorter than k goes out in a long-running stage (no --until-idle) once it has waited the max wait;
- a batch whose answer never parses is dead-lettered (m2_batch_failed) and never counted as covered."""

import json
import re
import threading
import time

import httpx
import pytest

from newskg.core.records import DeadLetter
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.stage import ExtractOptions, ExtractStage
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.reader import read_topic
from newskg.ingest.kafka.stage import run_stages
from newskg.pipeline import ensure_topics, group_consumer
from newskg.wiring import Wiring, kafka_options, open_graph
from tests.support.cli import newskg_json
from tests.support.kafka import publish
from tests.support.llm import chat_completion, scripted_client
from tests.support.records import published_chunk as make_chunk

pytestmark = pytest.mark.integration

MET = "The singer Doja Cat met the actor Jared Leto at a party."
DEAL = "Doja Cat signed a film deal with Jared Leto."
SNIPPET = re.compile(r"^\[(\d+)\] [^:]*: (.*)$", re.M)


class PairModel:
    """Answers M2 prompts like a careful model would: for the pair (Doja Cat, Jared Leto), one line per fact,
    citing the snippets that state it; nothing for other pairs. `garbage`: never valid JSON."""

    def __init__(self, garbage: bool = False):
        self.garbage = garbage
        self.calls = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls += 1
        user = json.loads(request.content)["messages"][-1]["content"]
        snippets = {int(n): text for n, text in SNIPPET.findall(user)}
        lines = []
        if "<object>\nJared Leto\n</object>" in user:
            for fact, words in (
                ("Doja Cat met Jared Leto", "met"),
                ("Doja Cat signed a film deal with Jared Leto", "film deal"),
            ):
                cited = [n for n, text in snippets.items() if words in text]
                if cited:
                    lines.append({"text": fact, "chunks": cited})
        content = "\x00 {{ not json" if self.garbage else json.dumps({"interactions": lines})
        return chat_completion(content, model="scripted-pair", prompt_tokens=10)


def m2_stage(settings, model: PairModel, k: int, **options) -> ExtractStage:
    store = GraphStore(open_graph(settings))
    store.init()
    llm = scripted_client(model, settings.data_dir / "llm" / "cache.sqlite", model="scripted-pair")
    return ExtractStage(
        store,
        ChunkExtractor(Linker(AliasIndex())),
        ExtractOptions(variant="m2", subjects=["Doja Cat"], m2_batch=k, **options),
        llm=llm,
    )


def doja(store: GraphStore) -> str:
    return store.find_entities("Doja Cat")[0].id


def test_a_fact_cited_only_from_day_20_is_not_visible_as_of_day_1(isolated):
    settings, names = isolated.settings, isolated.topics
    ensure_topics(settings)
    day1, day20 = make_chunk(MET, "2023-05-01", "a1"), make_chunk(DEAL, "2023-05-20", "a20")
    day20 = day20.model_copy(update={"source": "beta", "source_id": "s_beta"})
    publish(settings, names["chunks"], [day1, day20])
    stage = m2_stage(settings, PairModel(), k=2)
    stage.handle(read_topic(kafka_options(settings), names["chunks"]))  # one full batch of both days
    stage.on_idle()

    store = GraphStore(open_graph(settings))
    as_of_1 = {r.text: r for r in store.timeline(doja(store), 20230101, 20231231, as_of=20230501)}
    as_of_20 = {r.text: r for r in store.timeline(doja(store), 20230101, 20231231, as_of=20230520)}
    assert not [text for text in as_of_1 if "film deal" in text]  # the day-20 fact is not known on day 1
    assert as_of_1["Doja Cat met Jared Leto"].event_day == 20230501
    deal = as_of_20["Doja Cat signed a film deal with Jared Leto"]
    assert (deal.event_day, deal.published_day, deal.sources) == (20230520, 20230520, ["beta"])
    with open_graph(settings) as conn:
        days = conn.read("MATCH (x:Interaction {variant: 'M2'}) RETURN x.text AS t, x.published_day AS d")
    assert sorted((r["t"], r["d"]) for r in days) == [
        ("Doja Cat met Jared Leto", 20230501),
        ("Doja Cat signed a film deal with Jared Leto", 20230520),
    ]


def run_in_background(runner, until):
    """The long-running loop (`run extract` without --until-idle: on_idle is never called) until `until()`."""
    stop = threading.Event()
    thread = threading.Thread(target=run_stages, args=([runner], False, stop), daemon=True)
    thread.start()
    deadline = time.monotonic() + 90
    try:
        while not until() and time.monotonic() < deadline:
            time.sleep(0.3)
    finally:
        stop.set()
        thread.join(timeout=30)
    return until()


def m2_runner(wiring: Wiring, names, model: PairModel, **options):
    from newskg.extract.stage import ExtractRunner  # the runner that gives the stage its clock

    stage = m2_stage(wiring.settings, model, k=3, m2_max_wait_s=1.0, chunks_topic=names["chunks"], **options)
    # Joined as the real stage joins (a static member of the extract group, this test's own group).
    consumer = group_consumer(wiring, wiring.settings.consumer_group("extract"), "extract", [names["chunks"]])
    return ExtractRunner(stage, consumer, wiring.producer(), names["dlq"])


def covered(settings) -> list[dict]:
    with open_graph(settings) as conn:
        return conn.read("MATCH (b:M2Batch)-[:COVERS]->(c:Chunk) RETURN b.id AS id, collect(c.id) AS chunks")


def test_a_remainder_goes_out_after_the_max_wait_without_until_idle(isolated):
    settings, names = isolated.settings, isolated.topics
    ensure_topics(settings)
    chunks = [make_chunk(MET, "2023-05-01", "a1"), make_chunk(DEAL, "2023-05-02", "a2")]  # 2 < k = 3
    publish(settings, names["chunks"], chunks)
    model = PairModel()
    consumed_at = []
    with Wiring(settings) as wiring:  # the consumer leaves (and frees its lease) when the bundle closes
        runner = m2_runner(wiring, names, model)

        def done():
            if runner.stats.consumed == 2 and not consumed_at:
                consumed_at.append(time.monotonic())
            return bool(covered(settings))

        assert run_in_background(runner, done)
    (batch,) = covered(settings)
    assert sorted(batch["chunks"]) == sorted(c.id for c in chunks)
    assert time.monotonic() - consumed_at[0] >= 1.0  # it waited for the max wait, then went out
    with open_graph(settings) as conn:
        assert conn.read("MATCH (m:M2Pair) RETURN m.open AS open") == [{"open": False}]


def test_a_batch_that_never_parses_is_dead_lettered_not_covered(isolated):
    env, settings, names = isolated.env, isolated.settings, isolated.topics
    ensure_topics(settings)
    # Other days than the test above: its parsed answer, in the shared LLM cache, must not answer this prompt.
    chunks = [make_chunk(MET, "2023-06-01", "a1"), make_chunk(DEAL, "2023-06-02", "a2")]
    publish(settings, names["chunks"], chunks)
    before = newskg_json("extract", "stats", env=env)["counters"].get("m2_pair.batches_dead_lettered", 0)

    def dead():
        with open_graph(settings) as conn:
            return conn.read(
                "MATCH (f:M2Failed)-[:GAVE_UP]->(c:Chunk) RETURN f.pair AS pair, f.tries AS tries, "
                "collect(c.id) AS chunks"
            )

    with Wiring(settings) as wiring:
        runner = m2_runner(wiring, names, PairModel(garbage=True), m2_max_tries=3)
        assert run_in_background(runner, dead)
    (failed,) = dead()
    assert failed["tries"] == 3 and sorted(failed["chunks"]) == sorted(c.id for c in chunks)
    assert covered(settings) == []  # never silently covered
    letters = [DeadLetter.from_bytes(r.value) for r in read_topic(kafka_options(settings), names["dlq"])]
    (letter,) = [d for d in letters if d.reason == "m2_batch_failed"]
    assert letter.key == failed["pair"] and json.loads(letter.payload_excerpt)["chunk_ids"] == [c.id for c in chunks]
    assert letter.topic == names["chunks"] and runner.stats.dead == 1
    after = newskg_json("extract", "stats", env=env)["counters"]["m2_pair.batches_dead_lettered"]
    assert after == before + 1
