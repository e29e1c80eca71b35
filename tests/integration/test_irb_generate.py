"""IRB questions generated from the graph the synthetic NeoQA stream built through Kafka (real broker, FalkorDB,
qdrant-client): every answer and every false premise is re-checked by Cypher as of the question's day, the qrels
and passages were visible that day, and the same seed writes the same bytes."""

import json
from dataclasses import dataclass

import pytest

from newskg.core.timeaxes import day_key, end_of_day_ms
from newskg.evaluation.irb import rules
from newskg.evaluation.irb.generate import Checker, answer_holds, load, premise_holds
from newskg.graph.store.asof import AsOf
from newskg.graph.store.rows import row_of
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.cli import newskg, newskg_json
from tests.support.synthetic import synthetic_world

pytestmark = pytest.mark.integration

# Test-side reads, written apart from graph/store/questions.py: who had a visible interaction with an entity on a
# day, and how many visible interactions an entity (or a name pattern) had on a day.
PARTNERS = """
MATCH (k:Entity {id: $id})-[:SUBJECT_OF|OBJECT]-(x:Interaction)-[:SUBJECT_OF|OBJECT]-(p:Entity)
WHERE p.id <> k.id AND x.event_day = $day AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN collect(DISTINCT p.name) AS names
"""
ENTITY_ON_DAY = """
MATCH (e:Entity {id: $id})-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WHERE x.event_day = $day AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN count(DISTINCT x) AS n
"""
NAMES_ON_DAY = """
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
WHERE x.event_day = $day AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN collect(DISTINCT e.name) AS names
"""
CLAUSES_ON_DAY = """
MATCH (x:Interaction)
WHERE x.event_day = $day AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
MATCH (p:Entity {id: x.subject_id})
RETURN collect(DISTINCT [p.name, x.text]) AS pairs
"""
TEXT = "MATCH (x:Interaction {id: $id}) RETURN x.text AS text"
ARTICLE_TIMES = """
MATCH (a:Article) WHERE a.id IN $ids
RETURN max(a.published_day) AS last_published, max(a.ingested_ms) AS last_ingested
"""


@dataclass(frozen=True)
class Names:
    names: list[str]


@dataclass(frozen=True)
class Text:
    text: str


@dataclass(frozen=True)
class Pairs:
    pairs: list[list[str]]


@dataclass(frozen=True)
class Times:
    last_published: int
    last_ingested: int


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory):
    with synthetic_world(stack, tmp_path_factory.mktemp("irb"), seed=3) as made:
        yield made


def _generate(env, tmp_path, day: str, seed: int = 1, name: str = "q"):
    path = tmp_path / f"{name}-{day}-{seed}.jsonl"
    made = newskg_json(
        "eval", "irb", "generate", "--as-of", day, "--source", "neoqa", "--n", "60", "--seed", str(seed),
        "--no-llm", "--out", str(path), env=env,
    )  # fmt: skip
    print(json.dumps({k: v for k, v in made.items() if k != "out"}, indent=1))
    return made, path


def _as_of(day: str) -> dict:
    return {"as_of_day": day_key(day), "as_of_ms": end_of_day_ms(day_key(day))}


def _known(q, keypoint, role: str) -> str:
    return keypoint.subject_id if role == "object" else keypoint.object_id


def _clause_answers(store: GraphStore, params: dict, q) -> list[str]:
    """Who else's clause that day reads like the question's keypoint around its subject (no object to ask from)."""
    kp = q.keypoints[0]
    text = row_of(Text, store.conn.read(TEXT, {"id": kp.interaction_id})[0]).text
    at = text.lower().index(q.answer.lower())
    before, after = text[:at], text[at + len(q.answer) :]
    pairs = row_of(Pairs, store.conn.read(CLAUSES_ON_DAY, {**params, "day": kp.event_day})[0]).pairs
    return sorted(
        {name for name, t in pairs if t.startswith(before) and t.endswith(after) and len(t) > len(before + after)}
    )


def test_every_answer_and_false_premise_is_rechecked_by_cypher_as_of_its_day(world):
    env, settings, tmp_path, days = world
    made, path = _generate(env, tmp_path, days[-1])
    questions = load(path)
    assert made["questions"] == len(questions) >= 5
    # seed 1 over this world's 2-hop chains draws 2-hop questions: their Cypher re-check below must run
    assert made["two_hop_chains"] > 0 and {q.hops for q in questions} == {1, 2}
    assert {q.premise for q in questions} == {"valid", "false"}
    store = GraphStore(open_graph(settings))
    checker = Checker(store, AsOf.of(days[-1]), "neoqa")
    for q in questions:
        params = _as_of(days[-1])
        assert q.as_of == day_key(days[-1]) and q.qrels and q.keypoints
        assert answer_holds(checker, q) and premise_holds(checker, q)
        if q.premise == "false":
            kp = q.keypoints[0]
            if q.false_name:  # nobody whose name fits "C. Smith" had an interaction that day
                initial, surname = q.false_name[0].lower(), q.false_name.split()[-1].lower()
                names = row_of(Names, store.conn.read(NAMES_ON_DAY, {**params, "day": kp.event_day})[0]).names
                assert not [n for n in names if n.lower().startswith(initial) and n.lower().endswith(" " + surname)]
            else:  # the known entity had no interaction on the distorted day
                assert q.false_day is not None and q.false_day != kp.event_day
                known = _known(q, kp, q.masked.role)
                n = store.conn.read(ENTITY_ON_DAY, {**params, "id": known, "day": q.false_day})[0]["n"]
                assert n == 0, f"{q.id}: the graph makes the premise true"
            assert q.expected == "reject_premise" and q.false_premise
            continue
        if q.hops == 1 and q.keypoints[0].object_id is None:
            assert q.masked.role == "subject" and _clause_answers(store, params, q) == [q.answer], q.question
        elif q.hops == 1:
            kp = q.keypoints[0]
            if q.paraphrase == "none":  # the question is a cloze of its keypoint: the keypoint's numbers are in it
                assert all(n in q.question for n in rules.numbers_in(kp.text.split(" (on ")[0])), q.question
            got = store.conn.read(PARTNERS, {**params, "id": _known(q, kp, q.masked.role), "day": kp.event_day})
            assert got[0]["names"] == [q.answer], q.question
        else:
            assert q.bridge is not None and q.bridge.entity_id != q.masked.entity_id
            inner = next(k for k in q.keypoints if q.masked.entity_id not in (k.subject_id, k.object_id))
            outer = next(k for k in q.keypoints if q.masked.entity_id in (k.subject_id, k.object_id))
            bridge = store.conn.read(
                PARTNERS, {**params, "id": _known(q, inner, q.bridge.role), "day": inner.event_day}
            )
            assert bridge[0]["names"] == [q.bridge.name]
            answer = store.conn.read(PARTNERS, {**params, "id": q.bridge.entity_id, "day": outer.event_day})
            assert answer[0]["names"] == [q.answer]
        assert q.answer.lower() not in q.question.lower()


def test_passages_and_qrels_were_visible_on_an_earlier_day(world):
    env, settings, tmp_path, days = world
    early = days[len(days) * 2 // 3]
    _, path = _generate(env, tmp_path, early)
    store = GraphStore(open_graph(settings))
    for q in load(path):
        assert all(k.event_day <= day_key(early) for k in q.keypoints)
        times = row_of(Times, store.conn.read(ARTICLE_TIMES, {"ids": list(q.qrels)})[0])
        assert times.last_published <= day_key(early)
        assert times.last_ingested <= end_of_day_ms(day_key(early))


def test_same_seed_same_bytes(world):
    env, _, tmp_path, days = world
    _, first = _generate(env, tmp_path, days[-1], seed=7, name="a")
    _, second = _generate(env, tmp_path, days[-1], seed=7, name="b")
    assert first.read_bytes() == second.read_bytes()


def test_nothing_to_generate_exits_non_zero(world):
    env, _, tmp_path, days = world
    result = newskg(
        "eval", "irb", "generate", "--as-of", days[-1], "--source", "news", "--no-llm",
        "--out", str(tmp_path / "none.jsonl"), env=env, check=False,
    )  # fmt: skip
    assert result.returncode != 0 and "no question generated" in result.stderr


KEYS = """
MATCH (e:Entity)-[:SUBJECT_OF|OBJECT]-(x:Interaction)
RETURN DISTINCT e.id AS entity, x.event_day AS event_day
"""


@dataclass(frozen=True)
class Key:
    entity: str
    event_day: int


def test_batched_partners_equal_one_query_per_key(world):
    """Checker.prefetch_partners (cypher.PARTNERS_MANY, many keys a round trip) fills the cache with exactly what
    cypher.PARTNERS returns key by key, as of an early and the last day (a key with no partner: empty)."""
    _env, settings, _tmp_path, days = world
    store = GraphStore(open_graph(settings))
    keys = [(k.entity, k.event_day) for k in (row_of(Key, r) for r in store.conn.read(KEYS, {}))]
    assert len(keys) >= 5
    for day in (days[len(days) // 2], days[-1]):
        batched, one_by_one = Checker(store, AsOf.of(day), "neoqa"), Checker(store, AsOf.of(day), "neoqa")
        batched.prefetch_partners(keys, batch=3)
        assert {k: batched._partners[k] for k in keys} == {k: one_by_one.partners(*k) for k in keys}
        assert any(batched._partners[k] for k in keys)
