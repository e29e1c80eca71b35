"""IRB evaluation on the real servers: the synthetic NeoQA stream through Kafka into FalkorDB and the Qdrant
mirror, IRB questions constructed from the graph's interactions and their chunks (until the generator lands),
then `newskg eval irb run` with all three retrievers: report files written, figures consistent with the
per-question records, every retrieved passage visible as of its question's day."""

from __future__ import annotations

import json
import re

import pytest
from pydantic import BaseModel

from core.timeaxes import day_key
from evaluation.irb.answer import Prediction, grade_deterministic
from evaluation.irb.records import IRBQuestion, Keypoint, MaskedNode
from evaluation.irb.report import IRBSummary
from evaluation.irb.retrieval import load_passages, ndcg_at_k
from graph.store.asof import AsOf
from graph.store.rows import rows_of
from graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.cli import newskg, newskg_json
from tests.support.synthetic import synthetic_world

pytestmark = pytest.mark.integration

# Test-side read (not a read path of the system): interactions with a named object and the chunks stating them,
# both visible as of the day.
STATED = """
MATCH (x:Interaction)-[:EVIDENCE]->(c:Chunk)
WHERE x.object_id IS NOT NULL AND c.text IS NOT NULL AND c.day <= $as_of_day AND c.ingested_ms <= $as_of_ms
  AND x.published_day <= $as_of_day AND x.ingested_ms <= $as_of_ms
RETURN x.id AS id, collect(DISTINCT c.id) AS chunk_ids ORDER BY id
"""


class Stated(BaseModel):
    id: str
    chunk_ids: list[str]


@pytest.fixture(scope="module")
def world(stack, tmp_path_factory):
    with synthetic_world(stack, tmp_path_factory.mktemp("irb"), seed=5) as made:
        yield made


def _questions(store: GraphStore, day: int, n: int = 6) -> list[IRBQuestion]:
    """Single-hop questions masking an interaction's object, in the interaction's own words; the last one also
    as a false-premise variant (its attribute only: the grader, not the graph, is under test here)."""
    as_of = AsOf(day)
    passages = load_passages(store)
    rows = rows_of(Stated, store.conn.read(STATED, as_of.params()))
    interactions = {i.id: i for i in store.interactions([r.id for r in rows])}
    made: list[IRBQuestion] = []
    for row in rows:
        x = interactions.get(row.id)
        if x is None or not x.object_name or x.object_name not in x.text or x.object_name == x.subject_name:
            continue
        visible = [c for c in row.chunk_ids if c in passages and passages[c].visible(as_of)]
        if not visible:
            continue
        question = re.sub(re.escape(x.object_name), "which entity", x.text, count=1).rstrip(".") + "?"
        keypoint = Keypoint(
            text=x.text,
            interaction_id=x.id,
            subject_id=x.subject_id,
            object_id=x.object_id,
            event_day=x.event_day,
            chunk_ids=visible,
            article_ids=sorted({passages[c].article_id for c in visible}),
        )
        made.append(
            IRBQuestion(
                id=f"q{len(made)}",
                question=question,
                answer=x.object_name,
                as_of=day,
                hops=1,
                popularity=len(made) + 1,
                masked=MaskedNode(entity_id=x.object_id or "", name=x.object_name, role="object"),
                keypoints=[keypoint],
                qrels={a: 1 for a in keypoint.article_ids},
                source="neoqa",
            )
        )
        if len(made) == n:
            break
    last = made[-1]
    made.append(
        last.model_copy(
            update={
                "id": "q-false",
                "expected": "reject_premise",
                "premise": "false",
                "false_premise": f"not {last.answer}",
                "paraphrase": "short_name",
            }
        )
    )
    return made


def test_irb_run_with_all_three_retrievers_on_the_real_servers(world):
    env, settings, tmp_path, days = world
    day = day_key(days[-1])
    store = GraphStore(open_graph(settings))
    questions = _questions(store, day)
    assert len(questions) >= 3
    path = tmp_path / "irb.jsonl"
    path.write_text("".join(q.model_dump_json() + "\n" for q in questions))
    out = tmp_path / "report"

    # --no-llm: offline answers and grades even when an earlier test of the session started the LLM server
    printed = newskg_json("eval", "irb", "run", str(path), "--out", str(out), "--no-llm", env=env)

    for key in ("json", "html", "retrieval", "settings", "split"):
        assert (out / printed["files"][key].split("/")[-1]).stat().st_size > 0
    assert (out / "retrieval.png").read_bytes()[:4] == b"\x89PNG"
    body = json.loads((out / "report.json").read_text())
    summary = IRBSummary.model_validate(body["summary"])
    assert body["summary"] == printed["summary"]
    assert summary.grader == "deterministic" and summary.answer_mode == "offline"  # no LLM in this stack
    assert "deterministic grader" in (out / "report.html").read_text()
    assert list(summary.ndcg) == ["bm25", "dense", "hybrid"] and summary.questions == len(questions)
    assert summary.by_setting["closed-book"].not_attempted == 1.0  # offline closed-book: no answer

    passages = load_passages(store)
    results = body["run"]["results"]
    for retriever in ("bm25", "dense", "hybrid"):
        scores = []
        for r in results:
            found = r["retrieval"][retriever]
            assert len(found["passages"]) <= 5 and len(found["documents"]) <= 5
            assert all(passages[c].visible(AsOf(r["as_of"])) for c in found["passages"])  # as of the day
            assert found["ndcg"] == pytest.approx(ndcg_at_k(found["documents"], r["qrels"]), abs=1e-6)
            scores.append(found["ndcg"])
        assert summary.ndcg[retriever]["all"] == pytest.approx(sum(scores) / len(scores), abs=1e-6)
        split = summary.retrieval_split[f"rag:{retriever}"]
        rights = sum(r["retrieval"][retriever]["right"] for r in results)
        assert split["right"].questions == rights and split["wrong"].questions == len(results) - rights
    # The questions are their interactions' words: every retriever finds some relevant document.
    assert all((summary.ndcg[r]["all"] or 0) > 0 for r in ("bm25", "dense", "hybrid"))
    # Every grade is the deterministic grader's on the recorded answer.
    by_id = {q.id: q for q in questions}
    for r in results:
        for setting, a in r["answers"].items():
            prediction = Prediction(a["answer"], a["answer_status"], a["mode"])
            assert grade_deterministic(by_id[r["id"]], prediction).grade == a["grade"], (r["id"], setting)
    assert summary.column_sizes["false premise"] == 1


def test_an_earlier_day_retrieves_nothing_published_after_it(world):
    env, settings, tmp_path, days = world
    store = GraphStore(open_graph(settings))
    early, late = day_key(days[0]), day_key(days[-1])
    questions = [q.model_copy(update={"as_of": early, "id": f"early-{q.id}"}) for q in _questions(store, late)]
    path = tmp_path / "irb-early.jsonl"
    path.write_text("".join(q.model_dump_json() + "\n" for q in questions))
    body = newskg_json(
        "eval", "irb", "run", str(path), "--out", str(tmp_path / "early"), "--answerer", "rag", "--no-llm", env=env
    )
    report = json.loads((tmp_path / "early" / "report.json").read_text())
    passages = load_passages(store)
    seen = {c for r in report["run"]["results"] for found in r["retrieval"].values() for c in found["passages"]}
    assert all(passages[c].day <= early for c in seen)
    assert "closed-book" not in body["summary"]["by_setting"]


def test_missing_and_malformed_files_exit_non_zero(world):
    env, _, tmp_path, _ = world
    missing = newskg(
        "eval", "irb", "run", str(tmp_path / "absent.jsonl"), "--out", str(tmp_path / "x"), env=env, check=False
    )
    assert missing.returncode == 2 and "no IRB questions file" in missing.stderr
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    malformed = newskg("eval", "irb", "run", str(bad), "--out", str(tmp_path / "x"), env=env, check=False)
    assert malformed.returncode == 2 and "bad.jsonl:1" in malformed.stderr
