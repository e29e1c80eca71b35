"""NEON replay on the real servers: a synthetic NeoQA timeline streams through Kafka into FalkorDB and the Qdrant
mirror, a synthetic query log is written for it, `newskg eval spikes` finds the spike days the log was built to
have, and `newskg eval replay` answers every sampled spike-day query as of its day with every method × strategy ×
k. Every piece of evidence any method or strategy showed was published and ingested by the end of the replay
day, although the graph holds the same entities' later facts."""

from __future__ import annotations

import json

import pytest

from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.store.store import GraphStore
from newskg.qa.explore import read_neon_spikes
from newskg.wiring import open_graph, open_mirror
from tests.support.cli import newskg_json
from tests.support.isolation import Isolation

# The module's graph is built through the whole pipeline inside the first test's time budget: minutes on a busy
# two-core machine, so this module gets more than the default 300 s per test.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

METHODS = ("newsrag", "m0", "m1", "m2")
STRATEGIES = ("temporal", "generic")


def add_llm_variants(settings) -> int:
    """Offline extraction makes M0 only. M1 and M2 lines are written here as reworded copies of the M0 lines,
    with their chunks and days, through the project's own graph write and mirror upsert, so the replay has every
    variant to leak from."""
    store = GraphStore(open_graph(settings))
    m0 = store.interactions(sorted(store.ids("Interaction")))
    copies = [
        i.model_copy(update={"id": f"{i.id}-{v.lower()}", "variant": v, "text": f"{i.text} ({v} wording)"})
        for i in m0
        for v in ("M1", "M2")
    ]
    store.write_batch(interactions=copies)
    mirror = open_mirror(settings)
    try:
        mirror.upsert_interactions(copies)
    finally:
        mirror.close()
    return len(copies)


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("neon")
    with Isolation(stack, tmp_path) as isolation:
        isolated = isolation.new()
        env, settings = isolated.env, isolated.settings
        data = tmp_path / "neoqa"
        newskg_json(
            "ingest", "synthetic", "--timelines", "1", "--seed", "3", "--events", "4", "--out", str(data), env=env
        )
        newskg_json("run", "all", "--until-idle", env=env)
        assert add_llm_variants(settings) > 0
        log = tmp_path / "querylog.jsonl"
        made = newskg_json("eval", "querylog", "--data", str(data), "--out", str(log), "--seed", "1", env=env)
        yield env, settings, tmp_path, log, made


def test_spikes_from_the_log_match_the_known_spikes_of_an_entity_known_from_the_first_day(world):
    env, _, tmp_path, log, made = world
    found = newskg_json("eval", "spikes", "--log", str(log), "--out", str(tmp_path / "spikes"), env=env)
    known = json.loads(log.with_name(log.name + ".spikes.json").read_text())
    assert found["log"]["dropped_queries"] == known["dropped_queries"] == made["dropped_queries"] > 0
    assert found["log"]["privacy_applied"] and found["log"]["malformed"] == 0
    first_event = min(d for e in known["entities"] for d in e["event_days"])
    early = next(e for e in known["entities"] if e["event_days"][0] == first_event)
    detected = {e["name"].lower(): e for e in found["entities"]}
    assert [int(d.replace("-", "")) for d in detected[early["entity"]]["spike_days"]] == early["spike_days"]
    assert all((tmp_path / "spikes" / e["chart"].split("/")[-1]).exists() for e in found["entities"])
    # the explorer's timeline reads the same days from the file written beside the charts (qa/explore.py)
    written = tmp_path / "spikes" / "spikes.json"
    assert found["file"] == str(written) and json.loads(written.read_text()) == found
    assert read_neon_spikes(written).days == {
        e["entity_id"]: frozenset(int(d.replace("-", "")) for d in e["spike_days"]) for e in found["entities"]
    }


def evidence_times(settings, records) -> dict[str, tuple[int, int]]:
    """Graph id → (publication day, ingestion instant) as the graph records them, for every evidence shown."""
    store = GraphStore(open_graph(settings))
    ids = sorted({e["id"] for r in records for e in r["evidence"]})
    rows = store.conn.read(
        "MATCH (x:Interaction) WHERE x.id IN $ids RETURN x.id AS id, x.published_day AS day, x.ingested_ms AS ms "
        "UNION MATCH (c:Chunk) WHERE c.id IN $ids RETURN c.id AS id, c.day AS day, c.ingested_ms AS ms",
        {"ids": ids},
    )
    return {r["id"]: (r["day"], r["ms"]) for r in rows}


def later_facts(settings, entity_id: str, day: int) -> int:
    store = GraphStore(open_graph(settings))
    rows = store.conn.read(
        "MATCH (:Entity {id: $entity})-[:SUBJECT_OF|OBJECT]-(x:Interaction) WHERE x.published_day > $day "
        "RETURN count(x) AS n",
        {"entity": entity_id, "day": day},
    )
    return rows[0]["n"]


def assert_nothing_after_the_day(settings, records) -> None:
    times = evidence_times(settings, records)
    for r in records:
        for e in r["evidence"]:
            day, ms = times[e["id"]]
            assert day <= r["day_key"] and ms <= end_of_day_ms(r["day_key"]), (r["method"], r["strategy"], e)
            assert e["published_day"] <= r["day_key"]  # and the evidence's own copy of its day agrees


def test_replay_of_the_log_never_shows_evidence_from_after_the_replay_day(world):
    env, settings, tmp_path, log, _ = world
    out = tmp_path / "replay"
    result = newskg_json(
        "eval", "replay", "--log", str(log), "--limit", "4", "--k", "1,5,10", "--scores", "proxies",
        "--out", str(out), env=env,
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text())
    records = report["runs"]
    assert result["meta"]["runs"] == len(records) == 4 * len(METHODS) * len(STRATEGIES) * 3
    assert {(r["method"], r["strategy"]) for r in records} == {(m, s) for m in METHODS for s in STRATEGIES}
    assert_nothing_after_the_day(settings, records)
    for method in METHODS:  # not vacuous: every method and strategy showed evidence, and later facts existed
        for strategy in STRATEGIES:
            assert any(r["evidence"] for r in records if r["method"] == method and r["strategy"] == strategy)
    assert any(later_facts(settings, r["entity"]["id"], r["day_key"]) for r in records if r["entity"])
    # the variant filter: an Mx method shows only Mx lines (the copies carry their variant in their id)
    for r in records:
        if r["method"] in ("m1", "m2"):
            assert all(e["id"].endswith("-" + r["method"]) for e in r["evidence"])
        if r["method"] == "m0":
            assert not any(e["id"].endswith(("-m1", "-m2")) for e in r["evidence"])
    # prefixes: the k=1 evidence is the first item of the k=10 evidence of the same query, method and strategy
    by_key = {(r["query"], r["day"], r["method"], r["strategy"], r["k"]): r for r in records}
    for (query, day, method, strategy, k), r in by_key.items():
        if k == 1:
            assert r["evidence"] == by_key[(query, day, method, strategy, 10)]["evidence"][:1]
    # scores are proxies, named so, with rationales; the report's pieces exist
    assert result["meta"]["score_family"] == "proxy" and set(result["tables"]) == {"proxies"}
    assert all(a.startswith("proxy_") for r in records for a in r["judgements"]["proxies"]["attributes"])
    assert report["meta"]["log"]["dropped_queries"] > 0 and len(report["no_evidence"]) == 8
    assert (out / "report.html").exists() and (out / "topk-proxies.png").exists() and list(out.glob("spikes-*.png"))


def test_replay_from_the_graph_alone_uses_news_side_spikes(world):
    env, settings, tmp_path, _, _ = world
    out = tmp_path / "replay-graph"
    result = newskg_json(
        "eval", "replay", "--from-graph", "--top", "3", "--limit", "3", "--k", "3,10", "--scores", "proxies",
        "--out", str(out), env=env,
    )  # fmt: skip
    records = json.loads((out / "report.json").read_text())["runs"]
    assert result["meta"]["origin"] == "news mentions" and result["meta"]["queries"] == 3
    assert len(records) == 3 * len(METHODS) * len(STRATEGIES) * 2
    assert_nothing_after_the_day(settings, records)
    assert any(r["evidence"] for r in records)
