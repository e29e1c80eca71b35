"""The explorer's JSON endpoints on the real FalkorDB (RESP): search, neighbourhood, timeline, evidence, export, all
as of the day (moving the day earlier removes an edge first reported later), and the read-only console (a write
and a statement past the timeout are refused by the server, an over-long query by the API)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from falkordb.helpers import stringify_param_value
from fastapi import FastAPI
from fastapi.testclient import TestClient

from newskg.core.ids import chunk_id, entity_id, interaction_id, source_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.spikes import SpikeRule, detect
from newskg.core.timeaxes import day_iso, end_of_day_ms
from newskg.graph.store import explore
from newskg.graph.store.asof import AsOf
from newskg.graph.store.store import GraphStore
from newskg.qa.explore import ConsoleLimits, explore_router
from newskg.wiring import open_graph

pytestmark = pytest.mark.integration

ADA = Entity(id=entity_id("Ada Lovelace", "PERSON"), name="Ada Lovelace", type="PERSON", aliases=["Countess"])
BABBAGE = Entity(id=entity_id("Charles Babbage", "PERSON"), name="Charles Babbage", type="PERSON")
SOCIETY = Entity(id=entity_id("Royal Society", "ORG"), name="Royal Society", type="ORG")
EARLY, LATE = 20230501, 20230510
# 25 million rows: seconds of work, stopped by the server at the console's timeout
SLOW = "UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b WITH a, b WHERE a * b % 7 = 3 RETURN count(*)"


def report(text: str, day: int, source: str) -> Chunk:
    article = f"a_{chunk_id(text + source)[:10]}"
    ms = end_of_day_ms(day) - 3_600_000
    return Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source=source,
        source_id=source_id(source),
        url=f"https://{source}.example/{article}",
        title=f"Title: {text[:20]}",
        day=day,
        published=f"{day_iso(day)}T08:00:00Z",
        ingested_at=f"{day_iso(day)}T20:00:00Z",
        ingested_ms=ms,
        sentence_start=0,
        sentence_end=1,
    )


def fact(chunks: list[Chunk], subject: Entity, obj: Entity, text: str) -> Interaction:
    first = chunks[0]
    return Interaction(
        id=interaction_id(subject.id, obj.id, text, first.day, "M0"),
        subject_id=subject.id,
        subject_name=subject.name,
        object_id=obj.id,
        object_name=obj.name,
        text=text,
        event_day=first.day,
        published_day=first.day,
        ingested_at=first.ingested_at,
        ingested_ms=first.ingested_ms,
        variant="M0",
        chunk_ids=[c.id for c in chunks],
        article_ids=[c.article_id for c in chunks],
        source_ids=[c.source_id for c in chunks],
    )


@pytest.fixture
def spikes_file(tmp_path):
    """Where the NEON evaluation's spike days would be (NEWSKG_EXPLORE_SPIKES_FILE); absent unless a test writes it."""
    return tmp_path / "eval" / "spikes" / "spikes.json"


@pytest.fixture
def client(isolated, spikes_file):
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    met = [report("Ada Lovelace met Charles Babbage.", EARLY, "wire"), report("Lovelace meets Babbage.", EARLY, "post")]
    spoke = [report("Ada Lovelace spoke at the Royal Society.", LATE, "wire")]
    facts = [
        fact(met, ADA, BABBAGE, "Ada Lovelace met Charles Babbage"),
        fact(spoke, ADA, SOCIETY, "Ada Lovelace spoke at the Royal Society"),
    ]
    mentions = [(c.id, e.id) for c in met for e in (ADA, BABBAGE)] + [
        (c.id, e.id) for c in spoke for e in (ADA, SOCIETY)
    ]
    store.write_batch(chunks=[*met, *spoke], entities=[ADA, BABBAGE, SOCIETY], mentions=mentions, interactions=facts)
    app = FastAPI()
    limits = ConsoleLimits(timeout_ms=300, max_rows=5, max_chars=200)
    app.include_router(explore_router(lambda: store, limits, spikes_file=spikes_file))
    try:
        yield TestClient(app)
    finally:
        store.conn.close()


def test_search_suggests_names_and_aliases_as_of_the_day(client):
    found = client.get("/v1/explore/search", params={"q": "count", "as_of": "2023-05-20"}).json()["entities"]
    assert [(e["name"], e["interactions"]) for e in found] == [("Ada Lovelace", 2)]
    early = client.get("/v1/explore/search", params={"q": "a", "as_of": "2023-05-02"}).json()["entities"]
    assert {e["name"]: e["interactions"] for e in early} == {"Ada Lovelace": 1, "Charles Babbage": 1}  # no Society
    orgs = client.get("/v1/explore/search", params={"q": "o", "type": "ORG"}).json()["entities"]
    assert [e["name"] for e in orgs] == ["Royal Society"]


def test_neighbourhood_as_of_drops_an_edge_first_reported_later(client):
    late = client.get(f"/v1/explore/entities/{ADA.id}/neighbourhood", params={"as_of": "2023-05-20"}).json()
    assert {e["target"] for e in late["edges"]} == {BABBAGE.id, SOCIETY.id}
    met = next(e for e in late["edges"] if e["target"] == BABBAGE.id)
    assert (met["text"], met["day"], met["n_sources"], met["variant"]) == (
        "Ada Lovelace met Charles Babbage",
        "2023-05-01",
        2,
        "M0",
    )
    assert {n["id"]: n["mentions"] for n in late["nodes"]}[ADA.id] == 3
    early = client.get(f"/v1/explore/entities/{ADA.id}/neighbourhood", params={"as_of": "2023-05-05"}).json()
    assert {e["target"] for e in early["edges"]} == {BABBAGE.id}
    assert SOCIETY.id not in {n["id"] for n in early["nodes"]}
    # filters: entity type, variant, day window
    orgs = client.get(f"/v1/explore/entities/{ADA.id}/neighbourhood", params={"type": "ORG"}).json()
    assert {e["target"] for e in orgs["edges"]} == {SOCIETY.id}
    m1 = client.get(f"/v1/explore/entities/{ADA.id}/neighbourhood", params={"variant": "M1"}).json()
    assert m1["edges"] == []
    window = client.get(f"/v1/explore/entities/{ADA.id}/neighbourhood", params={"from": "2023-05-05"}).json()
    assert {e["target"] for e in window["edges"]} == {SOCIETY.id}


def test_timeline_counts_mentions_as_of_the_day_with_spike_days(client):
    body = client.get(f"/v1/explore/entities/{ADA.id}/timeline", params={"as_of": "2023-05-20", "days": 30}).json()
    counts = {row["day"]: row["count"] for row in body["series"] if row["count"]}
    assert counts == {EARLY: 2, LATE: 1}
    # the NEON rule (core/spikes.py) on this series: every day whose 3-day rolling sum is above mean + 1 sd
    assert body["spike_days"] == [20230501, 20230502, 20230503, 20230510, 20230511, 20230512]
    assert body["spike_days"] == detect(counts, body["series"][0]["day"], 20230520, SpikeRule(3, 1.0)).spikes
    early = client.get(f"/v1/explore/entities/{ADA.id}/timeline", params={"as_of": "2023-05-05", "days": 30}).json()
    assert {row["day"] for row in early["series"] if row["count"]} == {EARLY}
    assert body["spike_source"] == "rule" and "spike_file" not in body  # no NEON spike file: the rule, here


def test_timeline_shows_the_neon_evaluations_spike_days_when_present_never_after_the_as_of_day(client, spikes_file):
    spikes_file.parent.mkdir(parents=True)
    neon = {  # as `newskg eval spikes` writes it (a query log's spike days for Ada only)
        "origin": "query log",
        "entities": [{"entity_id": ADA.id, "name": "Ada Lovelace", "spike_days": ["2023-05-04", "2023-05-15"]}],
    }
    spikes_file.write_text(json.dumps(neon))

    def timeline(entity: Entity, as_of: str) -> dict:
        params = {"as_of": as_of, "days": 30}
        return client.get(f"/v1/explore/entities/{entity.id}/timeline", params=params).json()

    late = timeline(ADA, "2023-05-20")
    assert late["spike_days"] == [20230504, 20230515]  # not the rule's days: the evaluation's
    assert (late["spike_source"], late["spike_file"], late["spike_origin"]) == ("neon", str(spikes_file), "query log")
    early = timeline(ADA, "2023-05-10")
    assert early["spike_days"] == [20230504] and early["spike_source"] == "neon"  # 05-15 is after the as-of day
    assert max(row["day"] for row in early["series"]) == 20230510
    # an entity the file does not have: the rule computed here
    babbage = timeline(BABBAGE, "2023-05-20")
    assert babbage["spike_source"] == "rule" and babbage["spike_days"] == [20230501, 20230502, 20230503]
    # the file is read again when it changes, and one that is not a spike file is not used
    spikes_file.write_text("not json")
    assert timeline(ADA, "2023-05-20")["spike_source"] == "rule"


def test_evidence_shows_chunks_articles_and_other_sources(client):
    edge = client.get(f"/v1/explore/entities/{ADA.id}/neighbourhood").json()["edges"]
    met = next(e for e in edge if e["target"] == BABBAGE.id)
    body = client.get(f"/v1/explore/interactions/{met['id']}/evidence", params={"as_of": "2023-05-01"}).json()
    assert body["sources"] == ["post", "wire"]
    assert {c["chunk_text"] for c in body["evidence"]} == {
        "Ada Lovelace met Charles Babbage.",
        "Lovelace meets Babbage.",
    }
    assert all(c["title"] and c["published"] and c["ingested_at"] for c in body["evidence"])
    assert body["subject"]["name"] == "Ada Lovelace" and body["object"]["name"] == "Charles Babbage"
    spoke = next(e for e in edge if e["target"] == SOCIETY.id)
    assert (
        client.get(f"/v1/explore/interactions/{spoke['id']}/evidence", params={"as_of": "2023-05-05"}).status_code
        == 404
    )


def test_console_is_read_only_bounded_and_parameterised(client):
    ok = client.post(
        "/v1/explore/cypher",
        json={
            "query": "MATCH (e:Entity) WHERE e.name = $name RETURN e, e.name AS name",
            "params": {"name": "Ada Lovelace"},
        },
    )
    assert ok.status_code == 200, ok.text
    body = ok.json()
    assert body["columns"] == ["e", "name"] and body["rows"][0][1] == "Ada Lovelace"
    assert body["rows"][0][0]["kind"] == "node" and body["rows"][0][0]["labels"] == ["Entity"]
    as_of = {
        "query": "MATCH (x:Interaction) WHERE x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms "
        "RETURN count(x) AS n",
        "as_of": "2023-05-05",
    }
    assert client.post("/v1/explore/cypher", json=as_of).json()["rows"] == [[1]]  # the later fact is not counted
    capped = client.post("/v1/explore/cypher", json={"query": "UNWIND range(1, 20) AS i RETURN i"}).json()
    assert len(capped["rows"]) == 5 and capped["truncated"] is True
    write = client.post("/v1/explore/cypher", json={"query": "CREATE (:Entity {id: 'x', name: 'Mallory'})"})
    assert write.status_code == 403 and write.json()["reason"] == "write_refused"
    assert (
        client.post("/v1/explore/cypher", json={"query": "MATCH (e {name: 'Mallory'}) RETURN e"}).json()["rows"] == []
    )
    slow = client.post(
        "/v1/explore/cypher",
        json={"query": SLOW},
    )
    assert slow.status_code == 408 and slow.json()["reason"] == "timeout"
    assert client.post("/v1/explore/cypher", json={"query": "RETURN 1 " + " " * 300}).status_code == 422
    assert client.post("/v1/explore/cypher", json={"query": "MATCH (n RETURN n"}).status_code == 400


def test_export_as_json_and_graphml(client):
    params = {"entity": [ADA.id], "as_of": "2023-05-05"}
    body = client.get("/v1/explore/export", params=params).json()
    assert {n["id"] for n in body["nodes"]} == {ADA.id, BABBAGE.id} and len(body["edges"]) == 1
    xml = client.get("/v1/explore/export", params={**params, "format": "graphml"})
    assert xml.headers["content-type"].startswith("application/graphml+xml")
    root = ET.fromstring(xml.content)
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    assert len(root.findall(".//g:node", ns)) == 2 and len(root.findall(".//g:edge", ns)) == 1


@pytest.mark.parametrize(
    ("path", "params"),
    [
        ("/v1/explore/search", {"q": ""}),
        ("/v1/explore/search", {"q": "ada", "as_of": "2023-02-30"}),
        ("/v1/explore/search", {"q": "ada", "as_of": "yesterday"}),
        ("/v1/explore/search", {"q": "ada", "type": "person; DROP"}),
        (f"/v1/explore/entities/{ADA.id}/neighbourhood", {"variant": "M9"}),
        (f"/v1/explore/entities/{ADA.id}/neighbourhood", {"from": "2023-06-01", "to": "2023-05-01"}),
        (f"/v1/explore/entities/{ADA.id}/timeline", {"days": 3}),
        ("/v1/explore/export", {"entity": [ADA.id], "format": "csv"}),
        ("/v1/explore/export", {}),
    ],
)
def test_bad_input_is_a_422(client, path, params):
    assert client.get(path, params=params).status_code == 422


def test_unknown_entity_is_a_404(client):
    assert client.get("/v1/explore/entities/nobody/neighbourhood").status_code == 404
    assert client.get(f"/v1/explore/entities/{SOCIETY.id}/timeline", params={"as_of": "2023-05-02"}).status_code == 404


def solo(subject: Entity, text: str, published: int, event: int | None = None, ingested: int | None = None):
    """A fact with no object entity, published on `published` about `event` (default: that day), ingested by the
    end of `ingested` (default: the day it was published)."""
    chunk = report(text, published, "wire")
    ms = end_of_day_ms(ingested or published) - 60_000
    return chunk, Interaction(
        id=interaction_id(subject.id, None, text, event or published, "M0"),
        subject_id=subject.id,
        subject_name=subject.name,
        text=text,
        event_day=event or published,
        published_day=published,
        ingested_at=f"{day_iso(ingested or published)}T23:59:00Z",
        ingested_ms=ms,
        variant="M0",
        chunk_ids=[chunk.id],
        article_ids=[chunk.article_id],
        source_ids=[chunk.source_id],
    )


def test_the_view_the_explorer_opens_on_has_the_most_facts_as_of_the_day(isolated):
    """explore.most_facts (the entity scripts/explore_url.py opens on) counts what the view shows as of D: facts
    with no object too, and nothing published or ingested after D, nor an event day after D."""
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    try:
        met = [report("Ada Lovelace met Charles Babbage.", EARLY, "wire")]
        rows = [
            solo(SOCIETY, "The Royal Society met.", LATE),
            solo(SOCIETY, "The Royal Society voted.", LATE),
            *[solo(BABBAGE, f"Charles Babbage built engine {i}.", LATE, ingested=LATE + 2) for i in range(3)],
            *[solo(ADA, f"Ada Lovelace will speak on topic {i}.", EARLY, event=LATE + 5) for i in range(3)],
        ]
        chunks = [*met, *(c for c, _ in rows)]
        facts = [fact(met, ADA, BABBAGE, "Ada Lovelace met Charles Babbage"), *(x for _, x in rows)]
        mentions = [(met[0].id, ADA.id), (met[0].id, BABBAGE.id)] + [(c.id, x.subject_id) for c, x in rows]
        store.write_batch(chunks=chunks, entities=[ADA, BABBAGE, SOCIETY], mentions=mentions, interactions=facts)

        def most(day: int) -> list[tuple[str, int]]:
            return [(r.name, r.facts) for r in explore.most_facts(store, AsOf.of(day), limit=3)]

        # Ada's three talks are published but their event day is later; Babbage's engines are ingested later
        assert most(LATE) == [("Royal Society", 2), ("Ada Lovelace", 1), ("Charles Babbage", 1)]
        assert most(LATE + 2)[0] == ("Charles Babbage", 4)
        assert most(LATE + 5)[0] == ("Ada Lovelace", 4)
        assert most(EARLY) == [("Ada Lovelace", 1), ("Charles Babbage", 1)]
        # the view of it shows every one of those facts, the ones with no object entity included
        app = FastAPI()
        app.include_router(explore_router(lambda: store))
        view = TestClient(app).get(f"/v1/explore/entities/{SOCIETY.id}/neighbourhood", params={"as_of": day_iso(LATE)})
        assert [e["target"] for e in view.json()["edges"]] == [None, None]
    finally:
        store.conn.close()


def records_produced(store: GraphStore, query: str, params: dict[str, object]) -> int:
    """What the statement touched on the real FalkorDB: the records its operations produced (GRAPH.PROFILE)."""
    header = "CYPHER " + "".join(f"{name}={stringify_param_value(value)} " for name, value in params.items())
    plan = store.conn.execute_command("GRAPH.PROFILE", store.conn.graph_name, header + query)  # type: ignore[attr-defined]
    lines = [line.decode() if isinstance(line, bytes) else str(line) for line in plan]  # type: ignore[union-attr]
    return sum(int(m) for line in lines for m in re.findall(r"Records produced: (\d+)", line))


def test_a_neighbour_is_shown_without_counting_its_facts_and_the_focus_counts_stay_exact(isolated):
    """Issue #30: the neighbourhood view costs what it shows. A neighbour exists as of D because a visible edge
    names it, so it is not recounted: no counts (null), and reading it touches as many records whatever facts it
    has; the focus entity's counts are exactly ENTITY_VISIBLE's; every node's `facts` are the view's edges naming
    it. Babbage's later facts and mentions (after D) show nowhere as of D."""
    store = GraphStore(open_graph(isolated.settings))
    store.init()
    try:
        met = [report("Ada Lovelace met Charles Babbage.", EARLY, "wire")]
        mentions = [(met[0].id, ADA.id), (met[0].id, BABBAGE.id)]
        first = fact(met, ADA, BABBAGE, "Ada Lovelace met Charles Babbage")
        store.write_batch(chunks=met, entities=[ADA, BABBAGE], mentions=mentions, interactions=[first])
        as_of = AsOf.of(LATE)
        params = {"ids": [BABBAGE.id], **as_of.params()}
        touched = records_produced(store, explore.NEIGHBOURS_AS_OF, params)
        later = [solo(BABBAGE, f"Charles Babbage built engine {i}.", LATE, ingested=LATE + 1) for i in range(20)]
        later += [solo(BABBAGE, f"Charles Babbage drew plan {i}.", EARLY) for i in range(20)]
        store.write_batch(
            chunks=[c for c, _ in later], entities=[BABBAGE], mentions=[(c.id, BABBAGE.id) for c, _ in later],
            interactions=[x for _, x in later],
        )  # fmt: skip
        assert records_produced(store, explore.NEIGHBOURS_AS_OF, params) == touched  # not one per fact

        app = FastAPI()
        app.include_router(explore_router(lambda: store))
        body = TestClient(app).get(f"/v1/explore/entities/{ADA.id}/neighbourhood", params={"as_of": day_iso(LATE)})
        nodes = {n["id"]: n for n in body.json()["nodes"]}
        (ada,) = explore.nodes(store, [ADA.id], as_of)
        assert (nodes[ADA.id]["mentions"], nodes[ADA.id]["interactions"]) == (ada.mentions, ada.interactions) == (1, 1)
        assert (nodes[BABBAGE.id]["mentions"], nodes[BABBAGE.id]["interactions"]) == (None, None)
        assert {i: n["facts"] for i, n in nodes.items()} == {ADA.id: 1, BABBAGE.id: 1}
        assert [e["target"] for e in body.json()["edges"]] == [BABBAGE.id]
        # Babbage's own view, as of D: the engines ingested after D are not its facts yet, the plans are
        (babbage,) = explore.nodes(store, [BABBAGE.id], as_of)
        own = TestClient(app).get(f"/v1/explore/entities/{BABBAGE.id}/neighbourhood", params={"as_of": day_iso(LATE)})
        focus = {n["id"]: n for n in own.json()["nodes"]}[BABBAGE.id]
        assert (focus["mentions"], focus["interactions"]) == (babbage.mentions, babbage.interactions)
        assert (focus["interactions"], focus["facts"]) == (21, 21)
    finally:
        store.conn.close()
