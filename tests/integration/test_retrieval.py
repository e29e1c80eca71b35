"""Retrieval as NEON defines it, on the real FalkorDB (RESP) and each mirror engine (Qdrant Edge, qdrant-client
local mode) with the local MiniLM embedder:
on a day with two stories about one entity the query's own words pick the story (temporal and generic, through
the QA service too); a date written in the query is its day; NEON(Mx) reads only variant Mx, and the same
sentence from two variants stays two facts; nothing published or ingested after the day shows, for every
strategy, kind and variant."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest

from newskg.core.ids import chunk_id, entity_id, interaction_id, source_id
from newskg.core.records import Chunk, Entity, Interaction, Variant
from newskg.core.timeaxes import day_iso, end_of_day_ms
from newskg.graph.mirror.base import INTERACTIONS, AsOfFilter
from newskg.graph.mirror.embed import Embedder
from newskg.graph.store.reader import FactScope
from newskg.graph.store.store import GraphStore
from newskg.qa.answer import extractive
from newskg.qa.query import parse_query
from newskg.qa.retrieve import CHUNK_K, METHOD_K, TUPLE_K, Retriever
from newskg.qa.service import QAService
from newskg.qa.similarity import QueryTexts, query_vector
from newskg.wiring import open_graph, open_mirror
from tests.support.graph_world import MIRROR_ENGINES
from tests.support.isolation import Isolation

pytestmark = pytest.mark.integration

DAY, BEFORE, AFTER = 20230831, 20230830, 20230902
DOJA = Entity(id=entity_id("Doja Cat", "PERSON"), name="Doja Cat", type="PERSON")
RCA = Entity(id=entity_id("RCA Records", "ORG"), name="RCA Records", type="ORG")
TOUR = "Doja Cat announced a world tour with concerts in Paris and London"
LAYOFFS = "Doja Cat's label RCA Records cut 200 jobs in layoffs at its Los Angeles office"
STORIES = {  # day → (chunk text, M0 facts)
    DAY: [
        (f"{TOUR}. Tickets go on sale next week.", [TOUR, "Doja Cat will sell tickets next week"]),
        (f"{LAYOFFS}. The label said streaming revenue fell.", [LAYOFFS, "Doja Cat's label said revenue fell"]),
    ],
    BEFORE: [("Doja Cat posted a photo on Instagram.", ["Doja Cat posted a photo on Instagram"])],
    # Published after the day, and the best match for every query below: it must never show as of DAY.
    AFTER: [
        (
            "Doja Cat cancelled the world tour after layoffs at RCA Records.",
            ["Doja Cat cancelled the world tour after layoffs at RCA Records"],
        )
    ],
}
M1_FACTS = {DAY: [TOUR, "Doja Cat's label RCA Records announced layoffs"]}  # the first is M0's sentence too


def chunk(text: str, day: int) -> Chunk:
    article = f"a_{uuid.uuid4().hex[:10]}"
    ms = end_of_day_ms(day) - 3_600_000
    return Chunk(
        id=chunk_id(text),
        text=text,
        sentences=[text],
        article_id=article,
        article_ids=[article],
        source="wire",
        source_id=source_id("wire"),
        url=f"https://wire.example/{article}",
        title=text[:30],
        day=day,
        published=f"{day_iso(day)}T08:00:00Z",
        ingested_at=str(ms),
        ingested_ms=ms,
        sentence_start=0,
        sentence_end=1,
    )


def fact(c: Chunk, text: str, variant: Variant) -> Interaction:
    obj = RCA if "RCA" in text else None
    return Interaction(
        id=interaction_id(DOJA.id, obj.id if obj else None, text, c.day, variant),
        subject_id=DOJA.id,
        subject_name=DOJA.name,
        object_id=obj.id if obj else None,
        object_name=obj.name if obj else None,
        text=text,
        event_day=c.day,
        published_day=c.day,
        ingested_at=c.ingested_at,
        ingested_ms=c.ingested_ms,
        variant=variant,
        chunk_ids=[c.id],
        article_ids=[c.article_id],
        source_ids=[c.source_id],
    )


@pytest.fixture(scope="module", params=MIRROR_ENGINES)
def world(request, stack, tmp_path_factory):
    with Isolation(stack, tmp_path_factory.mktemp("retrieval")) as isolation:
        settings = isolation.new(mirror_engine=request.param).settings
        store = GraphStore(open_graph(settings))
        store.init()
        mirror = open_mirror(settings)
        chunks, mentions, facts = [], [], []
        for day, stories in STORIES.items():
            for text, texts in stories:
                c = chunk(text, day)
                chunks.append(c)
                mentions += [(c.id, DOJA.id)] + ([(c.id, RCA.id)] if "RCA" in text else [])
                facts += [fact(c, t, "M0") for t in texts]
                facts += [fact(c, t, "M1") for t in M1_FACTS.get(day, []) if t.split()[0:4] == text.split()[0:4]]
        store.write_batch(chunks=chunks, entities=[DOJA, RCA], mentions=mentions, interactions=facts)
        mirror.upsert_interactions(facts)
        mirror.upsert_chunks((c, [e for cid, e in mentions if cid == c.id]) for c in chunks)
        try:
            yield store, mirror, facts
        finally:
            mirror.close()
            store.conn.close()


@pytest.mark.parametrize("strategy", ["temporal", "generic"])
@pytest.mark.parametrize(("words", "story"), [("layoffs", LAYOFFS), ("tour", TOUR), ("world tour concerts", TOUR)])
def test_the_query_words_pick_the_days_story(world, strategy, words, story):
    store, mirror, _ = world
    retriever = Retriever(store, mirror)
    query = QueryTexts(f"Doja Cat {words}", f"(Date: August 31, 2023) Doja Cat {words}", words)
    top = retriever.retrieve(strategy, DOJA.id, query, DAY, 1, variant="M0")
    assert [e.text for e in top] == [story], (strategy, words)
    chunks = retriever.retrieve(strategy, DOJA.id, query, DAY, 1, kind="chunk")
    assert chunks and chunks[0].text.startswith(story), (strategy, words)


def test_through_the_service_the_words_reach_retrieval_and_the_answer(world):
    store, mirror, _ = world
    service = QAService(store, mirror)
    layoffs = service.ask("Doja Cat layoffs", day_iso(DAY), k=3, strategy="temporal")
    tour = service.ask("doja cat tour news", day_iso(DAY), k=3, strategy="temporal")
    assert layoffs.reformulated == "(Date: August 31, 2023) Doja Cat layoffs"
    assert tour.reformulated == "(Date: August 31, 2023) Doja Cat tour"
    assert layoffs.entity is not None and layoffs.entity.id == DOJA.id
    # Both variants' facts (no method chosen): the day's layoffs facts lead one, the tour the other.
    assert {e.text for e in layoffs.evidence[:2]} == {LAYOFFS, M1_FACTS[DAY][1]}
    assert tour.evidence[0].text == TOUR
    # The extractive answer leads with the sentences closest to the question, not the first tuple.
    assert all("layoffs" in line for line in layoffs.answer.splitlines()[1:3])
    assert tour.answer.splitlines()[1] == f"- August 31, 2023: {TOUR} (wire)"


def test_temporal_fills_k_from_neighbouring_days_only_after_the_day(world):
    store, mirror, _ = world
    evidence = Retriever(store, mirror).retrieve("temporal", DOJA.id, "Doja Cat Instagram", DAY, 10, variant="M0")
    days = [e.event_day for e in evidence]
    assert days == [DAY] * 4 + [BEFORE]  # the day's four facts (the best match is the day before), then the fill
    assert evidence[0].text != "Doja Cat posted a photo on Instagram"


def test_a_date_in_the_query_is_its_day(world):
    store, mirror, _ = world
    service = QAService(store, mirror)
    late = service.ask("Doja Cat tour on Aug 31 2023", "2023-09-05", k=5, strategy="temporal")
    assert late.as_of == "August 31, 2023" and late.asked == "September 5, 2023"
    assert late.reformulated == "(Date: August 31, 2023) Doja Cat tour"
    assert late.evidence[0].text == TOUR and all(
        e.published_day is not None and e.published_day <= DAY for e in late.evidence
    )
    plain = service.ask("Doja Cat tour", "2023-09-05", k=5, strategy="temporal")
    assert plain.evidence[0].event_day == AFTER  # without the date the asked day rules, and the later story shows
    never_later = service.ask("Doja Cat tour Sept 30 2023", "2023-09-01", k=5, strategy="temporal")
    assert never_later.as_of == "September 1, 2023" and all(
        e.published_day is not None and e.published_day <= 20230901 for e in never_later.evidence
    )


def test_a_variant_reads_only_its_own_and_identical_text_stays_two_facts(world):
    store, mirror, facts = world
    twins = [f for f in facts if f.text == TOUR]
    assert {f.variant for f in twins} == {"M0", "M1"} and len({f.id for f in twins}) == 2
    assert len(store.timeline(DOJA.id, DAY, DAY, as_of=DAY)) == 6  # four M0 and two M1 facts on the day
    retriever = Retriever(store, mirror)
    for strategy in ("temporal", "generic"):
        m1 = retriever.retrieve(strategy, DOJA.id, "Doja Cat tour", DAY, 10, variant="M1")
        assert {e.variant for e in m1} == {"M1"} and len(m1) == 2, strategy
        assert {e.id for e in m1} == {f.id for f in facts if f.variant == "M1"}, strategy
        m0 = retriever.retrieve(strategy, DOJA.id, "Doja Cat tour", DAY, 10, variant="M0")
        assert {e.variant for e in m0} == {"M0"} and TOUR in {e.text for e in m0}, strategy
        assert not {e.id for e in m0} & {e.id for e in m1}, strategy
    assert retriever.retrieve_method("m2", "temporal", DOJA.id, "Doja Cat tour", DAY) == []
    assert len(retriever.retrieve_method("newsrag", "temporal", DOJA.id, "Doja Cat tour", DAY)) == 3  # all chunks
    assert (METHOD_K["newsrag"], METHOD_K["m0"], CHUNK_K, TUPLE_K) == (5, 10, 5, 10)


@pytest.mark.parametrize("strategy", ["temporal", "generic", "hybrid", "newsrag"])
def test_nothing_after_the_day_for_any_strategy_kind_or_variant(world, strategy):
    store, mirror, _ = world
    retriever = Retriever(store, mirror)
    words = "cancelled tour layoffs"
    query = QueryTexts(f"doja cat {words}", f"(Date: August 31, 2023) Doja Cat {words}", words)
    for variant in (None, "M0", "M1"):
        for kind in ("interaction", "chunk"):
            found = retriever.retrieve(strategy, DOJA.id, query, DAY, 10, variant=variant, kind=kind)
            assert found, (strategy, variant, kind)
            assert all(e.published_day is not None and e.published_day <= DAY for e in found), (variant, kind)
            assert not any("cancelled" in e.text for e in found), (strategy, variant, kind)
            if variant and found[0].kind == "interaction":
                assert {e.variant for e in found} == {variant}
    later = retriever.retrieve(strategy, DOJA.id, query, AFTER, 10, variant="M0")
    assert any("cancelled" in e.text for e in later)  # the same read as of the later day does see it


def test_an_entitys_window_holds_the_facts_stated_by_chunks_that_mention_it(world):
    """A fact whose subject is another entity (here the opener; on real news often the same thing under another
    span, "Google Stadia" for "Stadia") is in the entity's temporal window when a chunk mentioning the entity
    states it — as of its own day only. Outside DAY's window, so the tests above are unchanged."""
    store, mirror, _ = world
    early, opener = 20230820, Entity(id=entity_id("Amala Opener", "PERSON"), name="Amala Opener", type="PERSON")
    c = chunk("Doja Cat's opener Amala Opener sold out the Forum arena in Inglewood.", early)
    stated = Interaction(
        id=interaction_id(opener.id, None, "Amala Opener sold out Forum arena", early, "M0"),
        subject_id=opener.id,
        subject_name=opener.name,
        text="Amala Opener sold out Forum arena",
        event_day=early,
        published_day=early,
        ingested_at=c.ingested_at,
        ingested_ms=c.ingested_ms,
        variant="M0",
        chunk_ids=[c.id],
        article_ids=[c.article_id],
        source_ids=[c.source_id],
    )
    store.write_batch(
        chunks=[c], entities=[opener], mentions=[(c.id, DOJA.id), (c.id, opener.id)], interactions=[stated]
    )
    mirror.upsert_interactions([stated])
    assert stated.id not in {r.id for r in store.timeline(DOJA.id, early, early, as_of=early)}  # names only
    assert stated.id in {
        r.id for r in store.timeline(DOJA.id, early, early, as_of=early, scope=FactScope(via_chunks=True))
    }
    assert not store.timeline(
        DOJA.id, early - 1, early, as_of=early - 1, scope=FactScope(via_chunks=True)
    )  # not before its day
    found = Retriever(store, mirror).retrieve("temporal", DOJA.id, "Doja Cat Forum sold out", early, 3, variant="M0")
    assert found and found[0].id == stated.id
    named_only = Retriever(store, mirror, facts_via_chunks=False)
    assert stated.id not in {e.id for e in named_only.retrieve("temporal", DOJA.id, "Doja Cat Forum", early, 3, "M0")}


def test_the_entity_search_is_the_mirrors_filtered_search_on_every_engine(world, monkeypatch):
    """The entity-filtered semantic search gives the mirror's own as-of filtered search's hits and scores, as of
    every day and for every variant. Qdrant Edge filters by its payload indexes; qdrant-client's local mode tests
    every point's payload in Python (seconds per query at 1 M points, bench/qa.py), so there the candidates come
    from the graph (the entity's facts visible as of the day), ranked by the mirror's vectors, and no filtered
    query is sent."""
    store, mirror, _ = world
    retriever = Retriever(store, mirror)
    query = QueryTexts("doja cat layoffs tour", "(Date: August 31, 2023) Doja Cat layoffs tour", "layoffs tour")
    vector = query_vector(mirror.embedder, query).tolist()
    expected: dict[tuple[int, Variant | None], list[tuple[str, float]]] = {}
    variants: tuple[Variant | None, ...] = (None, "M0", "M1")
    for day in (BEFORE, DAY, AFTER):
        for variant in variants:
            where = AsOfFilter(day=day, ingested_ms=end_of_day_ms(day), entity_id=DOJA.id, variant=variant)
            hits = mirror.search_vector(INTERACTIONS, vector, where, limit=3)
            expected[day, variant] = ranked([(h.graph_id, h.score) for h in hits])
    filtered: list[object] = []
    search = mirror.search_vector
    monkeypatch.setattr(mirror, "search_vector", lambda *a, **kw: filtered.append(a) or search(*a, **kw))
    for (day, variant), hits in expected.items():
        found = retriever.semantic(INTERACTIONS, query, day, 3, DOJA.id, variant)
        assert ranked([(e.id, e.score) for e in found]) == hits, (day, variant)
        assert all(e.published_day <= day for e in found)
    assert expected[DAY, None] and expected[AFTER, None] != expected[DAY, None]
    assert (filtered == []) == mirror.scans_filters


def ranked(hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """Best first, ties (the same sentence in two variants) by id: the order Qdrant gives ties is its own."""
    return sorted(((i, round(s, 4)) for i, s in hits), key=lambda hit: (-hit[1], hit[0]))


class CountingEmbedder:
    """The mirror's real embedder, recording every list of texts it is asked to embed."""

    def __init__(self, inner: Embedder):
        self.inner, self.name = inner, inner.name
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return self.inner.dim

    def embed(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return self.inner.embed(texts)


@pytest.mark.parametrize("strategy", ["temporal", "hybrid", "generic"])
def test_an_answer_embeds_only_the_query_once_and_picks_the_sentences_it_did_before(world, strategy, monkeypatch):
    """Issue 30: no per-request work ingest did. An interaction is one sentence, embedded when it was mirrored;
    retrieval scores it by that vector, and the extractive answer reuses the score: one embedding call per answer,
    for the query's forms, none for the evidence (hybrid's two lists share the query's vector); a name alone asked
    the temporal way embeds nothing (ranked by salience). The sentences chosen are those the answer chose when it
    embedded every evidence sentence per request."""
    store, mirror, _ = world
    counting = CountingEmbedder(mirror.embedder)
    monkeypatch.setattr(mirror, "embedder", counting)  # the same mirror, its embedder counted
    service = QAService(store, mirror)
    for question in ("Doja Cat layoffs", "doja cat tour news", "Doja Cat"):
        counting.calls.clear()
        result = service.ask(question, day_iso(DAY), k=5, strategy=strategy)
        texts = parse_query(question, day_iso(DAY), service.resolver).texts
        assert result.evidence, (strategy, question)
        by_salience = strategy == "temporal" and not texts.topic
        assert counting.calls == ([] if by_salience else [texts.embedded]), (strategy, question)
        if texts.topic:  # the answer ranks these by retrieval's cosines; a name alone keeps retrieval's order
            assert all(e.similarity is not None for e in result.evidence)
        embedded_per_request = [replace(e, similarity=None) for e in result.evidence]
        assert result.answer == extractive(texts, embedded_per_request, counting.inner), (strategy, question)
