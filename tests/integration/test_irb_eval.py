"""IRB end to end on the real servers, as a user runs it: the synthetic NeoQA stream through Kafka into FalkorDB
and the Qdrant mirror, `newskg eval irb generate` on the graph, then `newskg eval irb run` on the generated file
with all three retrievers. The generated qrels point at chunks visible as of each question's day; every nDCG@5
is in [0, 1], recomputes from the ranked documents and averages to the report's figure; every grade is the
deterministic grader's; the JSON, HTML and PNG reports are written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from newskg.core.timeaxes import day_key
from newskg.evaluation.irb.answer import Prediction, grade_deterministic
from newskg.evaluation.irb.generate import load
from newskg.evaluation.irb.records import IRBQuestion
from newskg.evaluation.irb.report import IRBSummary
from newskg.evaluation.irb.retrieval import Passage, load_passages, ndcg_at_k
from newskg.graph.store.asof import AsOf
from newskg.graph.store.store import GraphStore
from newskg.wiring import open_graph
from tests.support.cli import newskg, newskg_json
from tests.support.synthetic import SyntheticWorld, synthetic_world

# The first test pays for the stream, the graph and the generation (module fixture): ~3 min at load 15 here.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

RETRIEVERS = ("bm25", "dense", "hybrid")


class Generated(NamedTuple):
    world: SyntheticWorld
    path: Path
    questions: list[IRBQuestion]
    passages: dict[str, Passage]  # every chunk of the graph, with its time fields


@pytest.fixture(scope="module")
def generated(stack, tmp_path_factory):
    """The set `newskg eval irb generate` writes from the graph as of the stream's last day (offline wording:
    an LLM server started by another test of the session must not reword it)."""
    with synthetic_world(stack, tmp_path_factory.mktemp("irb"), seed=5) as world:
        path = world.folder / "irb.jsonl"
        made = newskg_json(
            "eval", "irb", "generate", "--as-of", world.days[-1], "--source", "neoqa", "--n", "16", "--seed", "2",
            "--no-llm", "--out", str(path), env=world.env,
        )  # fmt: skip
        questions = load(path)
        assert made["questions"] == len(questions) >= 3 and made["llm_worded"] == 0
        yield Generated(world, path, questions, load_passages(GraphStore(open_graph(world.settings))))


def test_generated_qrels_point_at_chunks_visible_as_of_each_question_day(generated):
    for q in generated.questions:
        as_of = AsOf(q.as_of)
        assert q.as_of == day_key(generated.world.days[-1])
        stated = {c for k in q.keypoints for c in k.chunk_ids}
        assert stated and all(generated.passages[c].visible(as_of) for c in stated), q.id
        # The qrels are exactly the articles of those chunks, each relevant once.
        assert q.qrels == {generated.passages[c].article_id: 1 for c in stated}, q.id
        for k in q.keypoints:
            assert k.event_day <= q.as_of
            assert set(k.article_ids) == {generated.passages[c].article_id for c in k.chunk_ids}


def test_generate_then_run_with_all_three_retrievers_through_the_cli(generated):
    world, questions, passages = generated.world, generated.questions, generated.passages
    out = world.folder / "report"
    # --no-llm: offline answers and grades even when an earlier test of the session started the LLM server
    printed = newskg_json(
        "eval", "irb", "run", str(generated.path), "--retrievers", ",".join(RETRIEVERS), "--out", str(out), "--no-llm",
        env=world.env,
    )  # fmt: skip

    for key in ("json", "html", "retrieval", "settings", "split"):
        assert Path(printed["files"][key]).parent == out and Path(printed["files"][key]).stat().st_size > 0
    for png in ("retrieval.png", "settings.png", "retrieval_split.png"):
        assert (out / png).read_bytes()[:4] == b"\x89PNG"
    body = json.loads((out / "report.json").read_text())
    summary = IRBSummary.model_validate(body["summary"])
    assert body["summary"] == printed["summary"]
    assert summary.grader == "deterministic" and summary.answer_mode == "offline"
    assert "deterministic grader" in (out / "report.html").read_text()
    assert list(summary.ndcg) == list(RETRIEVERS) and summary.questions == len(questions)
    assert summary.by_setting["closed-book"].not_attempted == 1.0  # offline closed-book: no answer
    assert summary.column_sizes["false premise"] == sum(q.premise == "false" for q in questions)

    results = body["run"]["results"]
    assert [r["id"] for r in results] == [q.id for q in questions]
    for retriever in RETRIEVERS:
        scores = []
        for r in results:
            found = r["retrieval"][retriever]
            assert len(found["passages"]) <= 5 and len(found["documents"]) <= 5
            assert all(passages[c].visible(AsOf(r["as_of"])) for c in found["passages"])  # as of the day
            assert 0.0 <= found["ndcg"] <= 1.0
            assert found["ndcg"] == pytest.approx(ndcg_at_k(found["documents"], r["qrels"]), abs=1e-6)
            relevant = set(r["qrels"])
            in_context = {passages[c].article_id for c in found["passages"]}
            assert found["right"] == (relevant <= in_context) and found["any_relevant"] == bool(relevant & in_context)
            scores.append(found["ndcg"])
        assert summary.ndcg[retriever]["all"] == pytest.approx(sum(scores) / len(scores), abs=1e-6)
        split = summary.retrieval_split[f"rag:{retriever}"]
        rights = sum(r["retrieval"][retriever]["right"] for r in results)
        assert split["right"].questions == rights and split["wrong"].questions == len(results) - rights
    # The template questions name the known entity and the day: BM25 finds a relevant article for some of them.
    assert (summary.ndcg["bm25"]["all"] or 0) > 0
    # Every grade is the deterministic grader's on the recorded answer.
    by_id = {q.id: q for q in questions}
    for r in results:
        assert set(r["answers"]) == {"closed-book", *(f"rag:{x}" for x in RETRIEVERS)}
        for setting, a in r["answers"].items():
            prediction = Prediction(a["answer"], a["answer_status"], a["mode"])
            assert a["grade"] in ("CORRECT", "INCORRECT", "NOT_ATTEMPTED"), (r["id"], setting)
            assert grade_deterministic(by_id[r["id"]], prediction).grade == a["grade"], (r["id"], setting)


def test_an_earlier_day_retrieves_nothing_published_after_it(generated):
    """The generated questions asked as of the stream's first day: no retriever returns a later chunk."""
    world = generated.world
    early = day_key(world.days[0])
    path = world.folder / "irb-early.jsonl"
    path.write_text(
        "".join(q.model_copy(update={"as_of": early}).model_dump_json() + "\n" for q in generated.questions)
    )
    body = newskg_json(
        "eval", "irb", "run", str(path), "--out", str(world.folder / "early"), "--answerer", "rag", "--no-llm",
        env=world.env,
    )  # fmt: skip
    report = json.loads((world.folder / "early" / "report.json").read_text())
    seen = {c for r in report["run"]["results"] for found in r["retrieval"].values() for c in found["passages"]}
    assert all(generated.passages[c].day <= early for c in seen)
    assert "closed-book" not in body["summary"]["by_setting"]


def test_missing_and_malformed_files_exit_non_zero(generated):
    env, folder = generated.world.env, generated.world.folder
    missing = newskg(
        "eval", "irb", "run", str(folder / "absent.jsonl"), "--out", str(folder / "x"), env=env, check=False
    )
    assert missing.returncode == 2 and "no IRB questions file" in missing.stderr
    bad = folder / "bad.jsonl"
    bad.write_text("not json\n")
    malformed = newskg("eval", "irb", "run", str(bad), "--out", str(folder / "x"), env=env, check=False)
    assert malformed.returncode == 2 and "bad.jsonl:1" in malformed.stderr
