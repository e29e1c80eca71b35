"""Issue #29, on the real FalkorDB (RESP): an entity's aliases are dated like everything else, and its name and
type do not depend on the order its records arrive in.

"Bluebird Corp" is first linked to Twitter on day 20 (a record that linked it by that alias alone). As of day 10
no read path may know it: QA resolution and the answer (and which words of a query become its topic),
/v1/entities, the timeline's lookup, the explorer's search and neighbourhood, the export, the saved Browser
queries and the NeoQA/FanOutQA graph readers. As of day 20 every one of them does. (The IRB readers read entity
names only, never aliases: graph/store/questions.py.)"""

from __future__ import annotations

import json

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from newskg.core.ids import chunk_id, interaction_id, named_entity_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.timeaxes import day_iso, end_of_day_ms
from newskg.evaluation.fanoutqa.answerers import GraphFanoutAnswerer
from newskg.evaluation.neoqa.answerers import GraphAnswerer
from newskg.graph.browser import saved_queries
from newskg.graph.store.asof import AsOf
from newskg.graph.store.export import export_jsonl
from newskg.graph.store.store import GraphStore
from newskg.qa.api import create_app
from newskg.qa.explore import explore_router
from newskg.qa.query import EntityResolver, parse_query
from newskg.qa.service import QAService
from newskg.wiring import open_graph
from tests.support.cli import newskg, newskg_json
from tests.support.graph_dump import graph_dump
from tests.support.isolation import Isolation
from tests.support.records import dated_chunk

pytestmark = pytest.mark.integration

DAY5, DAY10, DAY20, DAY25 = 20230705, 20230710, 20230720, 20230725
ALIAS = "Bluebird Corp"
TWITTER = named_entity_id("Twitter")
MUSK = named_entity_id("Elon Musk")


def ms(day: int) -> int:
    return end_of_day_ms(day) - 3_600_000


def report(text: str, day: int) -> Chunk:
    """A wire story of `day`, an article of its own, ingested an hour before the day ends (as `ms`)."""
    return dated_chunk(text, day, "wire", article=f"a_{chunk_id(text)[2:12]}")


def fact(chunk: Chunk, subject: str, subject_name: str, obj: str | None, text: str) -> Interaction:
    return Interaction(
        id=interaction_id(subject, obj, text, chunk.day, "M0"),
        subject_id=subject,
        subject_name=subject_name,
        object_id=obj,
        object_name="Elon Musk" if obj else None,
        text=text,
        event_day=chunk.day,
        published_day=chunk.day,
        ingested_at=chunk.ingested_at,
        ingested_ms=chunk.ingested_ms,
        variant="M0",
        chunk_ids=[chunk.id],
        article_ids=[chunk.article_id],
        source_ids=[chunk.source_id],
    )


def record(entity_id: str, name: str, kind: str, aliases: list[str], day: int, spelled: bool = True) -> Entity:
    """An entity record as the linker makes it for a chunk of `day` (extract/entities/linker.Linker.entities)."""
    return Entity(id=entity_id, name=name, type=kind, aliases=aliases, seen=(day, ms(day)), spelled=spelled)


def build(store: GraphStore) -> None:
    early = report("Twitter hired Elon Musk as its new chief.", DAY10)
    late = report("Bluebird Corp launched payments for its users.", DAY20)
    store.write_batch(
        chunks=[early],
        entities=[
            record(TWITTER, "Twitter", "ORG", ["Twitter"], DAY10),
            record(MUSK, "Elon Musk", "PERSON", ["Elon Musk"], DAY10),
        ],
        mentions=[(early.id, TWITTER), (early.id, MUSK)],
        interactions=[fact(early, TWITTER, "Twitter", MUSK, "Twitter hired Elon Musk")],
    )
    store.write_batch(  # linked by the alias alone: the record does not spell the name
        chunks=[late],
        entities=[record(TWITTER, "Twitter", "ORG", [ALIAS], DAY20, spelled=False)],
        mentions=[(late.id, TWITTER)],
        interactions=[fact(late, TWITTER, "Twitter", None, "Bluebird Corp launched payments")],
    )


@pytest.fixture(scope="module")
def graph(stack, tmp_path_factory):
    with Isolation(stack, tmp_path_factory.mktemp("aliases")) as isolation:
        isolated = isolation.new()
        store = GraphStore(open_graph(isolated.settings))
        store.init()
        build(store)
        yield store, isolated.env
        store.conn.close()


def test_qa_resolution_topic_and_answer(graph):
    store, _ = graph
    resolver = EntityResolver(store)
    assert resolver.resolve(ALIAS, DAY10)[0] is None
    assert resolver.resolve(ALIAS, DAY20)[0].id == TWITTER
    # as of day 10 the words are no name: they are the query's mention, not Twitter with the topic "payments"
    early = parse_query("bluebird corp payments", day_iso(DAY10), resolver)
    assert early.entity is None and early.topic == ""
    late = parse_query("bluebird corp payments", day_iso(DAY20), resolver)
    assert (late.entity.id, late.mention, late.topic) == (TWITTER, "bluebird corp", "payments")
    service = QAService(store, None)
    answer = service.ask("bluebird corp payments", day_iso(DAY10), k=5, strategy="temporal").as_dict()
    assert answer["entity"] is None and "Twitter" not in json.dumps(answer)
    answer = service.ask("bluebird corp payments", day_iso(DAY20), k=5, strategy="temporal").as_dict()
    assert answer["entity"]["id"] == TWITTER
    assert "Bluebird Corp launched payments" in [e["text"] for e in answer["evidence"]]


def test_api_entities_and_the_timeline_lookup(graph):
    store, env = graph
    client = TestClient(create_app(QAService(store, None), {}, api_keys=[]))

    def entities(search: str, day: int) -> list[tuple[str, list[str]]]:
        body = client.get("/v1/entities", params={"search": search, "as_of": day_iso(day)}).json()
        return [(e["id"], e.get("aliases")) for e in body["entities"]]

    assert entities(ALIAS, DAY10) == []
    assert [i for i, _ in entities(ALIAS, DAY20)] == [TWITTER]
    assert store.find_entities("Twitter", as_of=DAY10)[0].aliases == []  # its name is no alias of it
    assert store.find_entities("Twitter", as_of=DAY20)[0].aliases == [ALIAS]
    assert store.find_entities(ALIAS.upper(), as_of=DAY20)[0].id == TWITTER  # case-insensitive, as before
    # `graph timeline NAME` and /v1/entities/{id}/timeline look the entity up with find_entities
    assert store.find_entities(ALIAS, as_of=DAY10) == []
    args = ("graph", "timeline", ALIAS, "--from", "2023-07-01", "--to", "2023-07-31")
    assert newskg(*args, "--as-of", day_iso(DAY10), env=env, check=False).returncode != 0
    timeline = newskg_json(*args, "--as-of", day_iso(DAY20), env=env)
    assert timeline["entity"]["id"] == TWITTER and timeline["entity"]["aliases"] == [ALIAS]
    assert [i["text"] for i in timeline["interactions"]] == [
        "Twitter hired Elon Musk",
        "Bluebird Corp launched payments",
    ]


def test_explorer_search_and_neighbourhood(graph):
    store, _ = graph
    app = FastAPI()
    app.include_router(explore_router(lambda: store))
    client = TestClient(app)

    def search(q: str, day: int) -> list[dict]:
        return client.get("/v1/explore/search", params={"q": q, "as_of": day_iso(day)}).json()["entities"]

    assert search("bluebird", DAY10) == []
    assert [(e["id"], e["aliases"]) for e in search("bluebird", DAY20)] == [(TWITTER, [ALIAS])]
    assert [(e["id"], e["aliases"]) for e in search("twitter", DAY10)] == [(TWITTER, [])]

    def node(day: int) -> dict:
        body = client.get(f"/v1/explore/entities/{TWITTER}/neighbourhood", params={"as_of": day_iso(day)}).json()
        return {n["id"]: n for n in body["nodes"]}[TWITTER]

    assert node(DAY10)["aliases"] == [] and node(DAY20)["aliases"] == [ALIAS]
    graphml = client.get("/v1/explore/export", params={"entity": TWITTER, "as_of": day_iso(DAY10), "format": "graphml"})
    assert graphml.status_code == 200 and ALIAS not in graphml.text


def test_export_as_of_and_whole(graph):
    store, _ = graph

    def export(as_of: int | None) -> list[dict]:
        lines: list[dict] = []
        export_jsonl(store, lines.append, as_of)
        return lines

    def aliases(lines: list[dict]) -> dict[str, int]:
        return {x["properties"]["name"]: x["properties"]["day"] for x in lines if x.get("label") == "Alias"}

    early, late, whole = export(DAY10), export(DAY20), export(None)
    assert aliases(early) == {"Twitter": DAY10, "Elon Musk": DAY10}
    assert aliases(late) == aliases(whole) == {"Twitter": DAY10, "Elon Musk": DAY10, ALIAS: DAY20}
    assert ALIAS not in json.dumps(early)
    entity = next(x for x in early if x.get("label") == "Entity" and x["id"] == TWITTER)
    assert "aliases" not in entity["properties"] and entity["properties"]["name"] == "Twitter"
    # its facts of all time would count what came after D: only the whole graph's export has them
    assert all("facts" not in x["properties"] for x in early + late if x.get("label") == "Entity")
    assert any("facts" in x["properties"] for x in whole if x.get("label") == "Entity")
    ids = {x["id"] for x in early if x["type"] == "node"}
    edges = [x for x in early if x["type"] == "relationship"]
    assert all(x["start"] in ids and x["end"] in ids for x in edges)
    assert sum(x.get("rel") == "ALIAS" for x in early) == 2 and sum(x.get("rel") == "ALIAS" for x in late) == 3


def test_saved_browser_queries(graph):
    store, _ = graph
    query, _ = saved_queries()["find_entity"]

    def find(name: str, day: int) -> list[tuple[str, list[str]]]:
        rows = store.conn.read(query, {"name": name, **AsOf(day).params()})
        return [(r["id"], sorted(r["aliases"])) for r in rows]

    assert find(ALIAS, DAY10) == []
    assert find(ALIAS, DAY20) == [(TWITTER, [ALIAS])]
    assert find("Twitter", DAY10) == [(TWITTER, [])]


def test_neoqa_and_fanoutqa_graph_readers(graph):
    store, _ = graph
    neoqa = GraphAnswerer(store)
    assert neoqa.entities_in("What did Bluebird Corp launch?", DAY10) == []
    assert neoqa.entities_in("What did Bluebird Corp launch?", DAY20) == [TWITTER]
    fanout = GraphFanoutAnswerer(store, None)
    assert fanout.entities_in("What did Bluebird Corp launch?", AsOf(DAY10)) == []
    assert fanout.entities_in("What did Bluebird Corp launch?", AsOf(DAY20)) == [TWITTER]


def test_name_type_and_alias_times_do_not_depend_on_arrival_order(isolated):
    """Four records of one entity: the earliest (day 5) linked it by an alias alone (no spelling of its name) and
    typed it PRODUCT, day 10 spelled "Twitter" (ORG), day 20 spelled "TWITTER", day 25 showed the alias again. In
    any order, in one batch or several, the graph is the same: the type of the earliest record, the name of the
    earliest record that spelled it, each alias dated by its earliest record."""
    records = [
        record(TWITTER, "twitter inc", "PRODUCT", [ALIAS], DAY5, spelled=False),
        record(TWITTER, "Twitter", "ORG", ["Twitter"], DAY10),
        record(TWITTER, "TWITTER", "ORG", ["TWITTER"], DAY20),
        record(TWITTER, "TWITTER", "PERSON", [ALIAS, "TWITTER"], DAY25),
    ]
    orders = {
        "forward": [[r] for r in records],
        "backward": [[r] for r in reversed(records)],
        "shuffled": [[records[2]], [records[0]], [records[3]], [records[1]]],
        "together": [[records[3], records[1], records[0], records[2]]],
    }
    dumps = {}
    for name, batches in orders.items():
        store = GraphStore(open_graph(isolated.graph_named(name).settings))
        store.init()
        with store.conn:
            for batch in batches:
                store.write_batch(entities=batch)
            dumps[name] = graph_dump(store.conn)
            (row,) = store.conn.read("MATCH (e:Entity) RETURN e.name AS name, e.type AS type")
            assert (row["name"], row["type"]) == ("Twitter", "PRODUCT"), name
            days = store.conn.read("MATCH (:Entity)-[:ALIAS]->(a:Alias) RETURN a.name AS name, a.day AS day")
            assert {r["name"]: r["day"] for r in days} == {ALIAS: DAY5, "Twitter": DAY10, "TWITTER": DAY20}, name
    assert dumps["forward"] == dumps["backward"] == dumps["shuffled"] == dumps["together"]
