"""The M2 scheduler with a clock the test moves: full batches at once, remainders after the max wait (or at idle),
coverage only for parsed answers, bounded retries, then a dead letter and no coverage. The graph is an in-memory
twin of the five store calls the scheduler makes (tests/integration/test_m2_stage.py runs it on FalkorDB); the LLM
is the scripted OpenAI-compatible endpoint of tests/support/llm.py."""

import json

from newskg.core.llm.client import LLMOptions
from newskg.core.records import Chunk
from newskg.extract.m2_scheduler import BATCH_FAILED, M2Scheduler
from tests.support.llm import Script, scripted_client

SUBJ, OBJ = "e_doja", "e_leto"
NAMES = {SUBJ: "Doja Cat", OBJ: "Jared Leto"}


def chunk(n: int) -> Chunk:
    day = 20230500 + n
    return Chunk(
        id=f"c{n:02d}",
        text=f"Doja Cat met Jared Leto, report {n}.",
        sentences=["x"],
        article_id=f"a{n}",
        article_ids=[f"a{n}"],
        source="s",
        source_id="s_1",
        day=day,
        published=str(day),
        ingested_at=str(day),
        ingested_ms=day,
        sentence_start=0,
        sentence_end=1,
    )


class PairGraph:
    """Twin of GraphStore's M2 calls: chunks linked to both entities, coverage, given-up batches, open pairs."""

    def __init__(self):
        self.chunks: list[Chunk] = []
        self.covered: dict[str, list[list[str]]] = {}
        self.given_up: list[tuple[str, list[str], str]] = []
        self.open: dict[tuple[str, str], bool] = {}
        self.interactions = []

    def add(self, *numbers):
        self.chunks += [chunk(n) for n in numbers]

    def m2_pending(self, subject_id, object_id, pair):
        done = {c for batch in self.covered.get(pair, []) for c in batch}
        done |= {c for p, ids, _ in self.given_up if p == pair for c in ids}
        return [
            (c, c.text, [SUBJ, OBJ])
            for c in sorted(self.chunks, key=lambda c: (c.day, c.ingested_ms, c.id))
            if c.id not in done
        ]

    def write_batch(self, interactions=(), m2_batches=()):
        self.interactions += list(interactions)
        for pair, ids in m2_batches:
            self.covered.setdefault(pair, []).append(ids)

    def m2_give_up(self, pair, chunk_ids, reason, tries, at):
        self.given_up.append((pair, chunk_ids, reason))

    def m2_set_open(self, pairs, is_open):
        self.open.update({p: is_open for p in pairs})

    def m2_open_pairs(self):
        return sorted(p for p, is_open in self.open.items() if is_open)


class Clock:
    def __init__(self):
        self.now = 1_000_000.0

    def __call__(self):
        return self.now


def answer(*cited):
    return 200, json.dumps({"interactions": [{"text": "Doja Cat met Jared Leto", "chunks": list(cited)}]})


def scheduler(graph, script, clock, **kw):
    return M2Scheduler(
        graph,
        scripted_client(script, options=LLMOptions(max_retries=3)),
        NAMES.__getitem__,
        k=3,
        max_wait_s=600,
        clock=clock,
        **kw,
    )


def test_full_batches_go_at_once_and_a_remainder_waits_for_the_max_wait():
    graph, clock, script = PairGraph(), Clock(), Script(answer(1), answer(1))
    m2 = scheduler(graph, script, clock)
    graph.add(1, 2, 3, 4)
    m2.after_write([(SUBJ, OBJ)])
    assert graph.covered == {f"{SUBJ}|{OBJ}": [["c01", "c02", "c03"]]} and len(script.requests) == 1
    assert graph.open == {(SUBJ, OBJ): True}  # the remainder (c04) waits, and the graph remembers it
    clock.now += 599
    assert m2.tick() is False and len(script.requests) == 1
    clock.now += 1
    assert m2.tick() is True
    assert graph.covered[f"{SUBJ}|{OBJ}"][-1] == ["c04"] and graph.open == {(SUBJ, OBJ): False}
    assert m2.waiting() == {}


def test_the_wait_counts_from_the_oldest_waiting_chunk_not_the_newest():
    graph, clock, script = PairGraph(), Clock(), Script(answer(1))
    m2 = scheduler(graph, script, clock)
    graph.add(1)
    m2.after_write([(SUBJ, OBJ)])
    clock.now += 400
    graph.add(2)
    m2.after_write([(SUBJ, OBJ)])  # still fewer than k: waits, but since c01 was seen
    clock.now += 200
    assert m2.tick() is True and graph.covered[f"{SUBJ}|{OBJ}"] == [["c01", "c02"]]


def test_idle_flushes_every_remainder():
    graph, clock, script = PairGraph(), Clock(), Script(answer(1))
    m2 = scheduler(graph, script, clock)
    graph.add(1, 2)
    m2.after_write([(SUBJ, OBJ)])
    assert m2.flush_all() is True and graph.covered[f"{SUBJ}|{OBJ}"] == [["c01", "c02"]]
    assert m2.flush_all() is False


def test_a_restarted_scheduler_sends_the_remainder_a_previous_run_left_waiting():
    graph, clock = PairGraph(), Clock()
    graph.add(1)
    scheduler(graph, Script(), clock).after_write([(SUBJ, OBJ)])
    assert graph.open == {(SUBJ, OBJ): True}
    again = scheduler(graph, Script(answer(1)), clock)  # a new process: nothing in memory
    clock.now += 600
    assert again.tick() is True and graph.covered[f"{SUBJ}|{OBJ}"] == [["c01"]]


def test_a_failing_batch_is_retried_then_dead_lettered_and_never_covered():
    garbage = (200, "\x00 not json {{")
    graph, clock = PairGraph(), Clock()
    script = Script(*[garbage] * 6)  # each try: the call and its corrective retry
    m2 = scheduler(graph, script, clock, max_tries=3, topic="news.chunks")
    graph.add(1, 2, 3)
    m2.after_write([(SUBJ, OBJ)])
    assert graph.covered == {} and m2.given_up() == ()
    m2.tick()  # retried at the next tick, without waiting for the max wait
    assert graph.covered == {} and m2.given_up() == ()
    m2.tick()
    (gave_up,) = m2.given_up()
    letter = gave_up.letter
    assert letter.reason == BATCH_FAILED and letter.key == f"{SUBJ}|{OBJ}" and letter.topic == "news.chunks"
    payload = json.loads(letter.payload_excerpt)
    assert payload["chunk_ids"] == ["c01", "c02", "c03"] and payload["tries"] == 3
    assert graph.given_up == []  # noted in the graph only once the dead letter is acknowledged
    assert m2.tick() is True and len(script.requests) == 6  # not tried a fourth time meanwhile
    m2.dead_lettered([gave_up])
    assert graph.given_up == [(f"{SUBJ}|{OBJ}", ["c01", "c02", "c03"], BATCH_FAILED)] and graph.covered == {}
    assert m2.given_up() == () and m2.tick() is False and m2.waiting() == {}
    assert m2.llm.usage.counters == {"m2_pair.batches_failed": 3, "m2_pair.batches_dead_lettered": 1}


def test_only_the_give_ups_whose_letters_were_sent_are_noted_in_the_graph():
    """The stage hands `dead_lettered` exactly the give-ups whose letters its output carried: one that came later
    (say, from an idle flush between handle and acknowledged) stays pending until its own letter is sent."""
    garbage = (200, "\x00 not json {{")
    graph, clock = PairGraph(), Clock()
    m2 = scheduler(graph, Script(*[garbage] * 4), clock, max_tries=1)
    graph.add(1, 2, 3)
    m2.after_write([(SUBJ, OBJ)])
    (sent,) = m2.given_up()
    graph.chunks = []
    graph.add(4, 5, 6)
    m2.after_write([(SUBJ, OBJ)])  # another batch of the pair fails after `sent` was handed out
    assert len(m2.given_up()) == 2
    m2.dead_lettered([sent])
    assert graph.given_up == [(f"{SUBJ}|{OBJ}", ["c01", "c02", "c03"], BATCH_FAILED)]
    (later,) = m2.given_up()
    assert later.chunk_ids == ("c04", "c05", "c06")
    m2.dead_lettered([later, sent])  # a give-up noted already is not noted twice
    assert [ids for _, ids, _ in graph.given_up] == [["c01", "c02", "c03"], ["c04", "c05", "c06"]]
    assert m2.given_up() == ()


def test_a_batch_that_fails_once_then_parses_is_covered():
    graph, clock = PairGraph(), Clock()
    m2 = scheduler(graph, Script((200, "{{"), (200, "{{"), answer(2)), clock)
    graph.add(1, 2, 3)
    m2.after_write([(SUBJ, OBJ)])
    assert graph.covered == {}
    m2.tick()
    assert graph.covered == {f"{SUBJ}|{OBJ}": [["c01", "c02", "c03"]]}
    assert [i.chunk_ids for i in graph.interactions] == [["c02"]] and m2.given_up() == ()
