"""`newskg eval fanoutqa` as a user runs it (a subprocess): a clear non-zero exit for every answers file that
cannot be scored, the test split only validated, and a scored dev file's leaderboard JSON and report files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from newskg.evaluation.fanoutqa.dataset import load_dev, load_test
from tests.support.cli import newskg


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")}
    return {**clean, "NEWSKG_DATA_DIR": str(tmp_path / "data")}


def write(tmp_path: Path, name: str, content) -> Path:
    path = tmp_path / name
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def dev_ids(n: int) -> list[str]:
    return [q.id for q in load_dev()[:n]]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not found"),
        ("[{not json", "is not JSON"),
        ({"id": "x", "answer": "y"}, "expected a JSON list"),
        ([{"id": "7dcbbbdc7f1120cd"}], "answer"),
        ([{"id": "7dcbbbdc7f1120cd", "answer": None}], "answer"),
        ([{"id": "7dcbbbdc7f1120cd", "answer": "a", "extra": 1}], "extra"),
        ([{"id": "7dcbbbdc7f1120cd", "answer": "a"}, {"id": "7dcbbbdc7f1120cd", "answer": "b"}], "duplicate ids"),
        ([{"id": "no-such-question", "answer": "a"}], "not dev questions: no-such-question"),
    ],
)
def test_unscorable_answers_files_exit_2_with_the_reason(tmp_path, env, content, message):
    path = tmp_path / "missing.json" if content is None else write(tmp_path, "answers.json", content)
    proc = newskg("eval", "fanoutqa", "--answers", str(path), env=env, check=False, timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr
    assert not (tmp_path / "data" / "eval").exists()  # nothing half-written


def test_missing_answers_option_and_unknown_split_exit_2(tmp_path, env):
    assert newskg("eval", "fanoutqa", env=env, check=False, timeout=120).returncode == 2
    answers = write(tmp_path, "a.json", [])
    proc = newskg("eval", "fanoutqa", "--split", "train", "--answers", str(answers), env=env, check=False)
    assert proc.returncode == 2 and "--split must be dev or test" in proc.stderr


def test_test_split_is_validated_not_scored(tmp_path, env):
    test_id = load_test()[0].id
    answers = write(tmp_path, "test.json", [{"id": test_id, "answer": "Tokyo"}])
    proc = newskg("eval", "fanoutqa", "--split", "test", "--answers", str(answers), "--json", env=env, timeout=120)
    result = json.loads(proc.stdout)
    assert result["valid"] is True and result["scored"] is False and result["answered"] == 1
    assert result["questions"] == 725 and "hidden" in result["reason"]
    judged = newskg("eval", "fanoutqa", "--split", "test", "--answers", str(answers), "--judge", env=env, check=False)
    assert judged.returncode == 2 and "--judge needs reference answers" in judged.stderr
    dev_answers = write(tmp_path, "dev.json", [{"id": dev_ids(1)[0], "answer": "x"}])
    wrong_split = newskg("eval", "fanoutqa", "--split", "test", "--answers", str(dev_answers), env=env, check=False)
    assert wrong_split.returncode == 2 and "not test questions" in wrong_split.stderr


def test_judge_without_an_llm_exits_2(tmp_path, env):
    answers = write(tmp_path, "a.json", [{"id": dev_ids(1)[0], "answer": "x"}])
    proc = newskg("eval", "fanoutqa", "--answers", str(answers), "--judge", env=env, check=False, timeout=120)
    assert proc.returncode == 2 and "--judge needs an LLM" in proc.stderr


def test_a_dev_answers_file_is_scored_into_the_leaderboard_shape_and_a_report(tmp_path, env):
    dev = load_dev()
    answers = write(
        tmp_path,
        "mine.json",
        [{"id": dev[0].id, "answer": "Pat Burrell: right; Mark Mulder: left"}, {"id": dev[1].id, "answer": ""}],
    )
    out = tmp_path / "report"
    proc = newskg(
        "eval", "fanoutqa", "--answers", str(answers), "--only-answered", "--out", str(out), "--json", env=env
    )
    result = json.loads(proc.stdout)
    assert (result["scored"], result["answered"], result["unanswered"]) == (2, 2, 0)
    board = json.loads((out / "leaderboard.json").read_text())
    assert set(board) == {"acc", "rouge", "bleurt", "gpt", "raw"}
    assert set(board["acc"]) == {"loose", "strict"} and set(board["rouge"]) == {"rouge1", "rouge2", "rougeL"}
    assert board["bleurt"] is None and board["gpt"] is None
    assert [r["question_id"] for r in board["raw"]] == [dev[0].id, dev[1].id]
    assert 0 < board["raw"][0]["acc"] < 1 and board["raw"][1]["acc"] == 0
    report = json.loads((out / "report.json").read_text())
    assert report["per_question"][0]["missing"] and "BLEURT not computed" in report["notes"][0]
    for name in ("report.html", "metrics.png", "hops.png"):
        assert (out / name).stat().st_size > 1000
    assert "<img" in (out / "report.html").read_text()


def test_every_question_is_scored_by_default_unanswered_ones_as_zero(tmp_path, env):
    answers = write(tmp_path, "one.json", [{"id": dev_ids(1)[0], "answer": "nothing"}])
    proc = newskg("eval", "fanoutqa", "--answers", str(answers), "--json", env=env)
    result = json.loads(proc.stdout)
    assert (result["scored"], result["answered"], result["unanswered"]) == (310, 1, 309)
    assert result["report"]["json"].startswith(str(Path(env["NEWSKG_DATA_DIR"]) / "eval" / "fanoutqa-one"))


def test_answerer_options_are_checked_before_any_work(tmp_path, env):
    bad = newskg("eval", "fanoutqa", "--answerer", "oracle", env=env, check=False, timeout=120)
    assert bad.returncode == 2 and "--answerer must be one of graph, closed-book, evidence" in bad.stderr
    no_docs = newskg("eval", "fanoutqa", "--answerer", "evidence", env=env, check=False, timeout=120)
    assert no_docs.returncode == 2 and "--answerer evidence needs --docs DIR" in no_docs.stderr
    answers = write(tmp_path, "a.json", [])
    both = newskg("eval", "fanoutqa", "--answerer", "graph", "--answers", str(answers), env=env, check=False)
    assert both.returncode == 2 and "exactly one of --answerer NAME and --answers FILE" in both.stderr
    closed = newskg("eval", "fanoutqa", "--answerer", "closed-book", env=env, check=False, timeout=120)
    assert closed.returncode == 2 and "needs an LLM" in closed.stderr


def test_any_answers_file_is_scored_on_generated_questions(tmp_path, env):
    from newskg.evaluation.fanoutqa.generate import QUESTION, save
    from newskg.evaluation.fanoutqa.records import GeneratedQuestion, GraphEvidence, Primitive, SubQuestion

    answer: dict[str, Primitive] = {f"Party {n}": f"2034-01-0{n + 1}" for n in range(5)}
    steps = [SubQuestion(id="g-list", question="Which entities?", answer=list(answer))] + [
        SubQuestion(
            id=f"g-{n}",
            question=f"On what day, {name}?",
            answer=day,
            depends_on=["g-list"],
            evidence=GraphEvidence(interaction_id=f"i{n}", article_ids=[f"a{n}"], event_day=20340101 + n),
        )
        for n, (name, day) in enumerate(answer.items())
    ]
    question = GeneratedQuestion(
        id="g",
        question=QUESTION.format(hub="Hub", first="2033-01-01", last="2034-01-31"),
        decomposition=steps,
        answer=answer,
        as_of="2034-01-31",
        source="neoqa",
        hub_id="e_hub",
        hub_name="Hub",
        from_day=20330101,
        to_day=20340131,
    )
    questions = tmp_path / "generated.json"
    save([question], questions)
    half = {"Party 0": "2034-01-01", "Party 1": "2034-01-02", "Party 4": "1999-01-01"}
    answers = write(tmp_path, "mine.json", [{"id": "g", "answer": half}])
    out = tmp_path / "report"
    proc = newskg(
        "eval",
        "fanoutqa",
        "--questions",
        str(questions),
        "--answers",
        str(answers),
        "--out",
        str(out),
        "--json",
        env=env,
        timeout=300,
    )
    result = json.loads(proc.stdout)
    assert result["split"] == "generated" and result["questions"] == 1 and result["answered"] == 1
    # the reference counts each key and each value of a dict: 3 names + 2 days of the 10 strings
    assert result["leaderboard"]["acc"]["loose"] == pytest.approx(0.5)
    assert result["by_hops"][0]["hops"] == "5"  # one hop per neighbour's evidence
    assert (out / "report.html").exists() and (out / "leaderboard.json").exists()
