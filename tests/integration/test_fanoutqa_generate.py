"""FanOutQA-style questions generated from the graph the synthetic NeoQA stream built through Kafka (real broker,
FalkorDB, qdrant-client): every answer is reproduced by Cypher as of its day, no question is answerable from one
article, an earlier day sees only what was visible then, and the graph answerer is scored on them."""

import json
import shutil

import pytest

from newskg.core.timeaxes import day_key, end_of_day_ms
from newskg.evaluation.fanoutqa.docs import docs_settings
from newskg.evaluation.fanoutqa.generate import load_generated, reproduce
from newskg.evaluation.fanoutqa.records import GraphEvidence
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.cli import REPO, newskg_json
from tests.support.synthetic import synthetic_world

pytestmark = pytest.mark.integration

# Test-side reads (not a read path of the system): the articles that had reported an interaction as of a day.
ARTICLES_OF = """
MATCH (x:Interaction {id: $id})-[:EVIDENCE]->(:Chunk)-[:IN]->(a:Article)
WHERE a.published_day <= $as_of_day AND a.ingested_ms <= $as_of_ms
RETURN collect(DISTINCT a.id) AS ids, max(a.published_day) AS last_published, max(a.ingested_ms) AS last_ingested
"""

ARTICLE_TIMES = """
MATCH (a:Article) WHERE a.id IN $ids
RETURN max(a.published_day) AS last_published, max(a.ingested_ms) AS last_ingested
"""


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory):
    with synthetic_world(stack, tmp_path_factory.mktemp("fanout"), seed=3) as made:
        yield made


def _generate(env, tmp_path, day: str, source: str = "neoqa"):
    path = tmp_path / f"questions-{source}-{day}.json"
    made = newskg_json("eval", "fanoutqa", "generate", "--as-of", day, "--source", source, "--out", str(path), env=env)
    return made, load_generated(path)


def _evidence(question) -> list[GraphEvidence]:
    return [s.evidence for s in question.decomposition if isinstance(s.evidence, GraphEvidence)]


def _articles(store: GraphStore, interaction_id: str, day: str) -> dict:
    params = {"id": interaction_id, "as_of_day": day_key(day), "as_of_ms": end_of_day_ms(day_key(day))}
    return store.conn.read(ARTICLES_OF, params)[0]


def test_every_generated_answer_is_reproduced_by_cypher_as_of_its_day(world):
    env, settings, tmp_path, days = world
    made, questions = _generate(env, tmp_path, days[-1])
    assert made["questions"] == len(questions) >= 1
    store = GraphStore(open_graph(settings))
    for q in questions:
        assert isinstance(q.answer, dict) and len(q.answer) >= 5 and len(_evidence(q)) == len(q.answer)
        assert q.as_of == days[-1] and q.hops == len(q.answer)
        assert reproduce(store, q) == q.answer


def test_no_generated_question_is_answerable_from_one_article(world):
    env, settings, tmp_path, days = world
    _, questions = _generate(env, tmp_path, days[-1])
    store = GraphStore(open_graph(settings))
    for q in questions:
        per_fact = [set(_articles(store, e.interaction_id, q.as_of)["ids"]) for e in _evidence(q)]
        assert all(per_fact), "every sub-answer has an article that reported it by the day"
        assert not set.intersection(*per_fact), f"{q.id}: one article holds every sub-answer"


def test_an_earlier_day_sees_only_what_was_visible_then(world):
    env, settings, tmp_path, days = world
    early = days[len(days) * 2 // 3]
    _, late_questions = _generate(env, tmp_path, days[-1])
    _, questions = _generate(env, tmp_path, early)
    store = GraphStore(open_graph(settings))
    assert len(questions) <= len(late_questions)
    for q in questions:
        assert all(day <= early for day in q.answer.values())  # pyright: ignore[reportAttributeAccessIssue]
        for e in _evidence(q):
            seen = _articles(store, e.interaction_id, early)
            assert seen["ids"] and set(seen["ids"]) <= set(e.article_ids)
            times = store.conn.read(ARTICLE_TIMES, {"ids": e.article_ids})[0]
            assert times["last_published"] <= day_key(early)  # nothing published later is cited
            assert times["last_ingested"] <= end_of_day_ms(day_key(early))


def test_the_graph_answerer_is_scored_on_generated_questions(world):
    env, _, tmp_path, days = world
    _, questions = _generate(env, tmp_path, days[-1])
    report = newskg_json(
        "eval",
        "fanoutqa",
        "--questions",
        str(tmp_path / f"questions-neoqa-{days[-1]}.json"),
        "--answerer",
        "graph",
        "--out",
        str(tmp_path / "graph-report"),
        env=env,
    )
    assert report["split"] == "generated" and report["questions"] == len(questions)
    assert report["leaderboard"]["acc"]["loose"] > 0.8
    assert report["sub_questions"] == sum(len(q.decomposition) for q in questions)
    saved = json.loads((tmp_path / "graph-report" / "report.json").read_text())
    step = saved["traces"][0]["steps"][1]
    assert step["kind"] == "attribute" and step["evidence"] and step["answer"]
    news, _ = _generate(env, tmp_path, days[-1], "news")  # the stream holds no news articles: nothing to ask
    assert news["questions"] == 0


def test_the_evidence_answerer_reads_a_folder_through_the_pipeline_into_its_own_graph(world):
    env, settings, tmp_path, _ = world
    docs = tmp_path / "docs"
    docs.mkdir()
    for page in sorted((REPO / "tests" / "fixtures" / "news-html").glob("*.html.gz"))[:3]:
        shutil.copy(page, docs)
    before = GraphStore(open_graph(settings)).counts()
    report = newskg_json(
        "eval",
        "fanoutqa",
        "--answerer",
        "evidence",
        "--docs",
        str(docs),
        "--limit",
        "2",
        "--out",
        str(tmp_path / "evidence-report"),
        env=env,
    )
    assert report["split"] == "dev" and report["questions"] == 2 and report["sub_questions"] >= 2
    assert any("the --docs graph" in note for note in report["notes"])
    assert GraphStore(open_graph(docs_settings(settings, docs))).counts()["articles"] == 3  # its own graph
    assert GraphStore(open_graph(settings)).counts() == before  # the news graph untouched
    traces = json.loads((tmp_path / "evidence-report" / "report.json").read_text())["traces"]
    assert [t["answerer"] for t in traces] == ["evidence", "evidence"] and all(t["steps"] for t in traces)
