"""FanOutQA: the dev/test records, metric parity with the reference package on every dev question, ROUGE on known
pairs, and the LLM judge's parsing (scripted replies through the real client)."""

from __future__ import annotations

import json
import sys
from functools import lru_cache
from types import ModuleType
from unittest.mock import patch

import pytest
from fanoutqa import norm
from fanoutqa import utils as reference_utils

from newskg.evaluation.fanoutqa import reference
from newskg.evaluation.fanoutqa.dataset import load_dev, load_test
from newskg.evaluation.fanoutqa.judge import FactualityJudge
from newskg.evaluation.fanoutqa.metrics import score
from newskg.evaluation.fanoutqa.prompts.factuality import Verdict
from newskg.evaluation.fanoutqa.records import DevQuestion, SystemAnswer
from tests.unit.test_llm_extraction import Script, client

WRONG = "I could not find this in the documents."


@pytest.fixture(scope="module", autouse=True)
def shared_lemmas():
    """The spaCy pass is the only slow step (3,040 reference strings); both sides of a parity check call the same
    pure `fanoutqa.norm.lemmatize`, so it is memoised for this module. Everything above it (the reference's
    `normalize`, `answer_in_text`, our memo, loading, pairing, averaging) runs separately on each side."""
    reference.warm_up()
    with patch.object(norm, "lemmatize", lru_cache(maxsize=None)(norm.lemmatize)):
        yield


@pytest.fixture(scope="module")
def reference_scorer() -> ModuleType:
    """The reference `fanoutqa.eval.scorer` itself, as the expected side. Its imports of BLEURT (not installable)
    and kani (its OpenAI judge) get inert stand-ins here, in the test only: the BLEURT and GPT methods are never
    called, only `score_accuracy` and `score_rouge`."""
    bleurt_score = ModuleType("bleurt.score")
    bleurt_score.BleurtScorer = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    kani = ModuleType("kani")
    kani.Kani = object  # type: ignore[attr-defined]
    kani_openai = ModuleType("kani.engines.openai")
    kani_openai.OpenAIEngine = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    stubs = {
        "bleurt": ModuleType("bleurt"),
        "bleurt.score": bleurt_score,
        "kani": kani,
        "kani.engines": ModuleType("kani.engines"),
        "kani.engines.openai": kani_openai,
    }
    with patch.dict(sys.modules, stubs):
        import fanoutqa.eval.scorer as scorer

    return scorer


@pytest.fixture(scope="module")
def dev() -> list[DevQuestion]:
    return load_dev()


def _partial(answer):
    """Half the items, or the first word."""
    if isinstance(answer, dict):
        return reference.str_answer(dict(list(answer.items())[: max(1, len(answer) // 2)]))
    if isinstance(answer, list):
        return reference.str_answer(answer[: max(1, len(answer) // 2)])
    return str(answer).split(" ")[0] + " (perhaps)"


def _list_shaped(answer):
    if isinstance(answer, dict):
        return list(answer.values())
    return answer if isinstance(answer, list) else [answer]


def _dict_shaped(answer):
    if isinstance(answer, dict):
        return answer
    return {str(i): v for i, v in enumerate(answer)} if isinstance(answer, list) else {"answer": answer}


CONSTRUCTED = (
    reference.str_answer,  # right
    _partial,
    lambda _: WRONG,
    lambda _: "",
    _list_shaped,
    _dict_shaped,
    lambda answer: answer if isinstance(answer, int | float) else 1984,  # numeric
)


def constructed_answer(index: int, question: DevQuestion):
    """Right, partial, wrong, empty, list-shaped, dict-shaped and numeric answers, in turn over the dev set."""
    return CONSTRUCTED[index % len(CONSTRUCTED)](question.answer)


def answers_for(dev: list[DevQuestion]) -> list[SystemAnswer]:
    """Every dev question but every 31st (unanswered: scores 0 in the reference), in reverse order."""
    given = [SystemAnswer(id=q.id, answer=constructed_answer(i, q)) for i, q in enumerate(dev) if i % 31 != 7]
    return given[::-1]


def assert_rouge_equal(ours, theirs) -> None:
    for kind in reference.ROUGE_TYPES:
        mine, ref = getattr(ours, kind), getattr(theirs, kind)
        assert (mine.precision, mine.recall, mine.fscore) == pytest.approx(
            (ref.precision, ref.recall, ref.fscore), abs=1e-12
        ), kind


@pytest.mark.parametrize("only_answered", [False, True])
def test_figures_equal_the_reference_scorer_on_every_dev_question(dev, reference_scorer, only_answered):
    given = answers_for(dev)
    ours = score(dev, given, only_answered=only_answered)
    questions = reference_utils.load_dev()  # the reference's own loader, not our records
    theirs = reference_scorer.Scorer(questions, [a.model_dump() for a in given], only_score_answered=only_answered)
    accuracy, accuracy_raw = theirs.score_accuracy()
    rouge, rouge_raw = theirs.score_rouge()

    assert ours.scored == (len(given) if only_answered else 310)
    assert ours.leaderboard.acc.loose == pytest.approx(accuracy.loose, abs=1e-12)
    assert ours.leaderboard.acc.strict == pytest.approx(accuracy.strict, abs=1e-12)
    assert_rouge_equal(ours.leaderboard.rouge, rouge)
    assert {q.question_id: q.loose for q in ours.per_question} == pytest.approx(accuracy_raw, abs=1e-12)
    for q in ours.per_question:
        assert_rouge_equal(q.rouge, rouge_raw[q.question_id])
    # the set is not degenerate: every kind of outcome occurs
    assert 0 < accuracy.strict < accuracy.loose < 1
    assert any(q.loose == 1 for q in ours.per_question) and any(0 < q.loose < 1 for q in ours.per_question)
    assert ours.unanswered == (0 if only_answered else 310 - len(given))


def test_per_question_accuracy_calls_the_reference_function_directly(dev, reference_scorer):
    """Our strict flag and missing strings are the reference `answer_in_text`'s, for every kind of answer."""
    for i, question in enumerate(dev[:70]):
        candidate = constructed_answer(i, question)
        expected = reference_scorer.answer_in_text(question.model_dump()["answer"], candidate)
        mine = score([question], [SystemAnswer(id=question.id, answer=candidate)]).per_question[0]
        assert (mine.strict, mine.loose, mine.missing) == (expected.found, expected.score, expected.missing)


def test_our_normalize_memo_keeps_types_apart():
    """`1`, `1.0` and `"1"` are different texts to the reference; the memo must not share their entries."""
    for value in (1, 1.0, "1", 3, 3.0, "1,000 cats ran", 2.50):  # 1 cached first, then 1.0 must not hit it
        assert reference.normalize(value) == norm.normalize(value)
    assert (reference.normalize(1), reference.normalize(1.0)) == ("1", "10")  # the reference drops the "."


def test_dev_and_test_records_keep_the_shipped_data(dev):
    raw = json.loads(reference.data_file("dev").read_text())
    assert len(dev) == 310 and len(load_test()) == 725
    for ours, shipped, theirs in zip(dev, raw, reference_utils.load_dev(), strict=True):
        assert ours.model_dump(mode="json")["answer"] == shipped["answer"]
        assert type(ours.answer) is type(shipped["answer"])  # 1 stays int, 1.0 float, True bool
        assert [e.pageid for e in ours.necessary_evidence] == [e.pageid for e in theirs.necessary_evidence]
        assert ours.hops == len(theirs.necessary_evidence) >= 5
    assert {t.id: t.hops for t in load_test()} == {t.id: len(t.necessary_evidence) for t in reference_utils.load_test()}


@pytest.mark.parametrize(
    ("target", "prediction", "expected"),
    [
        # 6 reference tokens, 3 predicted, all found: P 1, R .5; bigrams 2 of 5
        ("the cat sat on the mat", "the cat sat", {"rouge1": (1, 0.5), "rouge2": (1, 0.4), "rougeL": (1, 0.5)}),
        # Porter stemming: cats/cat, running/runs -> run
        ("cats running", "cat runs", {"rouge1": (1, 1), "rouge2": (1, 1), "rougeL": (1, 1)}),
        # a dict answer is "key - value" lines; word order matters only for rouge2/rougeL
        ({"Paris": "France"}, "France Paris", {"rouge1": (1, 1), "rouge2": (0, 0), "rougeL": (0.5, 0.5)}),
        (["Oslo", "Bergen"], "nothing here", {"rouge1": (0, 0), "rouge2": (0, 0), "rougeL": (0, 0)}),
    ],
)
def test_rouge_on_known_pairs(target, prediction, expected):
    got = reference.rouge(target, prediction)
    for kind, (precision, recall) in expected.items():
        f1 = 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
        assert (got[kind].precision, got[kind].recall, got[kind].fmeasure) == pytest.approx((precision, recall, f1))


# --- the judge -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("reply", "grade"),
    [
        ("The submission names both cities.\nC\nC", "C"),
        ("Step 1 ... it adds a third city.\n\n**B**", "B"),
        ("Reasoning.\nAnswer: (D)", "D"),
        ("so the final answer is E.", "E"),
        ('{"grade": "A", "reasoning": "subset"}', None),  # JSON is read by the client, not from_text
        ("A subset, I think, but maybe a superset.", None),
        ("", None),
        ("\x00\x01 ~~~ G\nZ", None),
        ("the answer is a subset", None),
    ],
)
def test_verdict_from_text(reply, grade):
    verdict = Verdict.from_text(reply)
    assert (verdict.grade if verdict else None) == grade


def test_judge_grades_through_the_client_and_counts_garbage_apart(tmp_path, dev):
    questions = dev[:5]
    given = [SystemAnswer(id=q.id, answer=reference.str_answer(q.answer)) for q in questions[:4]]  # 5th: none
    script = Script(
        (200, "Same facts.\nC\nC"),  # q1: graded C, correct
        (200, "Contradicts the expert.\nD"),  # q2: graded D, not correct
        (200, "lorem ipsum"),  # q3: garbage, then the corrective retry ...
        (200, "still no letter at all"),  # ... garbage again: unparsed, never a grade
        (200, '{"grade": "B", "reasoning": "adds a detail"}'),  # q4: JSON works too
    )
    judge = FactualityJudge(client(script, tmp_path), workers=1)
    report = score(questions, given, judge=judge)

    statuses = [(q.judge.status, q.judge.grade) for q in report.per_question if q.judge]
    assert statuses == [("graded", "C"), ("graded", "D"), ("unparsed", None), ("graded", "B"), ("unanswered", None)]
    summary = report.judge
    assert summary is not None
    assert (summary.graded, summary.correct, summary.unparsed, summary.unanswered) == (3, 2, 1, 1)
    assert summary.grades == {"B": 1, "C": 1, "D": 1}
    assert report.leaderboard.gpt == pytest.approx(2 / 4)  # the unparsed one is outside the denominator
    assert [q["gpt"] for q in report.leaderboard_json()["raw"]] == [1, 0, None, 1, 0]
    assert summary.calls == 5 and summary.prompt_tokens == 500
    assert "<submission>" in script.requests[0]["messages"][1]["content"]
    assert judge.client.usage.counters["fanoutqa_factuality.unparsed"] == 1

    again = FactualityJudge(client(Script(), tmp_path), workers=1)  # no replies left: everything from the cache
    rerun = score(questions, given[:2], judge=again)
    assert rerun.judge is not None and rerun.judge.cached == 2 and rerun.judge.calls == 0


def test_long_answers_are_cut_for_the_judge_as_the_reference_does(tmp_path, dev):
    script = Script((200, "C\nC"))
    judge = FactualityJudge(client(script, tmp_path), workers=1)
    judge.grade(dev[0], "x" * 9000)
    content = script.requests[0]["messages"][1]["content"]
    assert (
        "x" * reference.JUDGE_MAX_ANSWER_CHARS in content
        and "x" * (reference.JUDGE_MAX_ANSWER_CHARS + 1) not in content
    )
