"""The FanOutQA judge over the wire: the real local llama.cpp server (SmolLM2-135M) through the project's
client. So small a model may or may not end with a rubric letter; either way each answer ends up graded or counted
unparsed, never silently dropped or misread."""

import json

import pytest

from newskg.evaluation.fanoutqa.dataset import load_dev
from tests.support.cli import newskg_json

pytestmark = [pytest.mark.integration, pytest.mark.llm]


def test_judge_grades_or_counts_unparsed_on_the_local_llm(llm_stack, tmp_path):
    dev = load_dev()
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps([{"id": dev[0].id, "answer": "Right, Left, Left, Left, Left"}]))
    env = {**llm_stack.env, "NEWSKG_LLM_MAX_TOKENS": "256"}
    out = tmp_path / "report"
    result = newskg_json(
        "eval", "fanoutqa", "--answers", str(answers), "--only-answered", "--judge", "--out", str(out), env=env
    )
    judge = result["judge"]
    assert judge["graded"] + judge["unparsed"] == 1 and judge["unanswered"] == 0
    assert judge["calls"] + judge["cached"] >= 1 and judge["model"] == "smollm2"
    question = json.loads((out / "report.json").read_text())["per_question"][0]
    assert question["judge"]["status"] in ("graded", "unparsed")
    if question["judge"]["status"] == "graded":
        assert question["judge"]["grade"] in "ABCDEF" and result["leaderboard"]["gpt"] in (0.0, 1.0)
    else:
        assert result["leaderboard"]["gpt"] is None  # no grade at all: no judge figure, not a zero
