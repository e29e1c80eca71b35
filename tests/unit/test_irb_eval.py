"""IRB evaluation: nDCG@k exact on constructed rankings, max-passage document ranking, BM25 as of the question's
day, the deterministic grader's table, the LLM grader and answerers on scripted replies through the real client
(garbage counted apart, never a grade), malformed question files, and the report tables' consistency."""

from __future__ import annotations

import json
import math

import pytest

from newskg.evaluation.irb.answer import Answerer, Grader, Prediction, extractive, grade_deterministic, normalise
from newskg.evaluation.irb.prompts.grade import GradeVerdict
from newskg.evaluation.irb.records import IRBQuestion, Keypoint, MaskedNode
from newskg.evaluation.irb.report import summarise, tables, write_report
from newskg.evaluation.irb.retrieval import BM25Ranker, Passage, Rankers, fuse, max_passage, ndcg_at_k, rank
from newskg.evaluation.irb.run import IRBFileError, load_questions
from newskg.graph.store.asof import AsOf
from newskg.qa.evidence import Evidence
from newskg.qa.retrieve import Retriever
from tests.unit.test_llm_extraction import Script, client

DAY_MS = 86_400_000
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00Z


def question(answer="Ada Lovelace", expected="answer", aliases=(), qid="q1", **kw) -> IRBQuestion:
    keypoint = Keypoint(
        text="t",
        interaction_id="i1",
        subject_id="e1",
        object_id=None,
        event_day=20260101,
        chunk_ids=["c1"],
        article_ids=["a1"],
    )
    fields = dict(
        id=qid,
        question="Who founded the Analytical Society?",
        answer=answer,
        aliases=list(aliases),
        expected=expected,
        as_of=20260102,
        hops=1,
        popularity=3,
        masked=MaskedNode(entity_id="e1", name=answer, role="subject"),
        keypoints=[keypoint],
        qrels={"a1": 1},
        source="neoqa",
    )
    if expected == "reject_premise":
        fields |= {"premise": "false", "false_premise": "that she founded it in 1999"}
    return IRBQuestion.model_validate(fields | kw)


# --- nDCG@k and max-passage


def test_ndcg_at_5_exact_on_constructed_rankings():
    qrels = {"a": 1, "b": 1}
    # Relevant at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); ideal = 1 + 1/log2(3).
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["x", "a", "y", "b", "z"], qrels) == pytest.approx(expected) == pytest.approx(0.650921, abs=1e-6)
    assert ndcg_at_k(["a", "b", "x"], qrels) == pytest.approx(1.0)
    assert ndcg_at_k(["b", "a"], qrels) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y", "z", "w", "v", "a", "b"], qrels) == 0.0  # beyond rank 5 counts nothing
    assert ndcg_at_k(["x", "a"], {"a": 1}) == pytest.approx(1 / math.log2(3))  # 0.6309
    assert ndcg_at_k(["a"], {}) == 0.0  # no relevant document: 0, never a division by zero
    # Five relevant, one found first: 1 / (1 + 1/log2 3 + 1/log2 4 + 1/log2 5 + 1/log2 6).
    five = {d: 1 for d in "abcde"}
    ideal = sum(1 / math.log2(r + 2) for r in range(5))
    assert ndcg_at_k(["a", "x", "y", "z", "w"], five) == pytest.approx(1 / ideal) == pytest.approx(0.339160, abs=1e-6)


def passage(chunk: str, article: str, text: str = "x", day: int = 20260101, ingested_ms: int = BASE_MS) -> Passage:
    return Passage(chunk, article, text, day, ingested_ms)


def test_max_passage_ranks_a_document_by_its_best_passage():
    ranked = [passage("c1", "a1"), passage("c2", "a2"), passage("c3", "a1"), passage("c4", "a3"), passage("c5", "a2")]
    assert max_passage(ranked) == ["a1", "a2", "a3"]
    top = rank(ranked, k=2)
    assert [p.chunk_id for p in top.passages] == ["c1", "c2"] and top.documents == ["a1", "a2"]


def test_fusion_orders_passages_by_reciprocal_rank():
    a, b, c = passage("c1", "a1"), passage("c2", "a2"), passage("c3", "a3")
    # c2: ranks 2 and 1 → 1/62 + 1/61; c1: rank 1 only → 1/61; c3: rank 2 only → 1/62.
    assert [p.chunk_id for p in fuse([[a, b], [b, c]])] == ["c2", "c1", "c3"]


def test_bm25_sees_only_passages_visible_as_of_the_day_with_one_index_per_day():
    passages = {
        "c1": passage("c1", "a1", "The harbour bridge in Quillport reopened after repairs.", 20260101, BASE_MS),
        "c2": passage("c2", "a2", "Quillport bridge repairs delayed again.", 20260103, BASE_MS + 2 * DAY_MS),
        # published on the 1st, ingested on the 3rd: not known at the end of the 2nd
        "c3": passage("c3", "a3", "Quillport bridge toll announced.", 20260101, BASE_MS + 2 * DAY_MS + 5),
        "c4": passage("c4", "a4", "Football results from the weekend.", 20260101, BASE_MS),
    }
    ranker = BM25Ranker(passages)
    early = ranker.search("Quillport bridge", AsOf(20260102))
    assert [p.chunk_id for p in early] == ["c1"]  # c4 shares no word: not retrieved
    late = ranker.search("Quillport bridge", AsOf(20260103))
    assert {p.chunk_id for p in late} == {"c1", "c2", "c3"}
    ranker.search("bridge", AsOf(20260102))
    assert len(ranker._indexes) == 2  # one index per distinct day, reused
    assert ranker.search("the of and", AsOf(20260103)) == []  # stopwords only
    assert BM25Ranker({}).search("bridge", AsOf(20260103)) == []


class ScriptedDense(Retriever):
    """The mirror's semantic search, scripted: the chunk ids it returns, and how often it was asked."""

    def __init__(self, hits: list[str]):  # no store: only `semantic` is used
        self.mirror = object()  # pyright: ignore[reportAttributeAccessIssue] — a stand-in, never called
        self.hits = hits
        self.calls = 0

    def semantic(self, collection, text, as_of, k, entity_id, variant=None):  # pyright: ignore[reportIncompatibleMethodOverride]
        self.calls += 1
        return [Evidence(h, "chunk", "x", 20260101) for h in self.hits]


def test_hybrid_fuses_the_dense_list_of_the_question_without_searching_again():
    passages = {
        "c1": passage("c1", "a1", "Quillport bridge reopened.", 20260101, BASE_MS),
        "c2": passage("c2", "a2", "Weather in Quillport.", 20260101, BASE_MS),
        "c3": passage("c3", "a3", "Quillport bridge later.", 20260103, BASE_MS + 2 * DAY_MS),
    }
    dense = ScriptedDense(["c2", "c3", "c1"])
    rankers = Rankers(passages, dense)
    day = AsOf(20260102)
    assert [p.chunk_id for p in rankers.search("dense", "Quillport bridge", day).passages] == ["c2", "c1"]
    hybrid = rankers.search("hybrid", "Quillport bridge", day)
    assert dense.calls == 1  # the dense list of this question and day, reused
    assert [p.chunk_id for p in hybrid.passages] == ["c1", "c2"]  # c1: BM25 first, dense second
    rankers.search("dense", "Quillport bridge", AsOf(20260103))
    rankers.search("dense", "bridge", day)
    assert dense.calls == 3  # another day or another question: searched


# --- the deterministic grader


@pytest.mark.parametrize(
    ("expected", "text", "grade"),
    [
        ("answer", "Ada Lovelace", "CORRECT"),
        ("answer", "It was ada  LOVELACE, in 1999.", "CORRECT"),
        ("answer", "Lovelace", "CORRECT"),  # the alias
        ("answer", "Charles Babbage", "INCORRECT"),
        ("answer", "Ada Lovelaces", "INCORRECT"),  # whole words only
        ("answer", "I don't know.", "NOT_ATTEMPTED"),
        ("answer", "The passages do not say.", "NOT_ATTEMPTED"),
        ("answer", "", "NOT_ATTEMPTED"),
        ("answer", None, "NOT_ATTEMPTED"),
        ("answer", "False premise: Ada Lovelace never did that.", "INCORRECT"),  # rejected a valid premise
        ("reject_premise", "False premise: she founded it in 2011.", "CORRECT"),
        ("reject_premise", "That is not the case; it was in 2011.", "CORRECT"),
        ("reject_premise", "Ada Lovelace", "INCORRECT"),  # answered along with the false premise
        ("reject_premise", "I don't know", "NOT_ATTEMPTED"),
    ],
)
def test_deterministic_grader_table(expected, text, grade):
    q = question(expected=expected, aliases=["Lovelace"])
    status = "answered" if text else "none"
    graded = grade_deterministic(q, Prediction(text, status, "llm"))
    assert (graded.status, graded.grade, graded.grader) == ("graded", grade, "deterministic")


def test_normalise_drops_case_punctuation_and_articles():
    assert normalise("  The Ministry of  Ports, Inc.! ") == "ministry of ports inc"
    assert normalise("Ada’s") == "adas"


# --- the LLM grader and answerers, scripted through the real client


@pytest.mark.parametrize(
    ("reply", "grade"),
    [
        ("CORRECT", "CORRECT"),
        ("**INCORRECT**", "INCORRECT"),
        ("Grade: NOT_ATTEMPTED", "NOT_ATTEMPTED"),
        ("NOT ATTEMPTED", "NOT_ATTEMPTED"),
        ("It names another person, so INCORRECT", "INCORRECT"),
        ('{"grade": "CORRECT"}', "CORRECT"),  # the client reads JSON first; the word alone also reads
        ("the answer looks correct to me", None),  # lower-case prose is not a verdict
        ("", None),
        ("\x00\x01 ~~~ C\nZ", None),
        ("CORRECT. Final grade: CORRECT", "CORRECT"),  # the same word twice agrees with itself
        # Different grade words are ambiguous, hence unparsed (the NEON judge's rule), never the last one read:
        ("Reply with exactly one word: CORRECT, INCORRECT or NOT_ATTEMPTED.", None),  # the rubric echoed
        ("CORRECT because it is not NOT_ATTEMPTED", None),
        ("INCORRECT? No: CORRECT", None),
    ],
)
def test_grade_verdict_from_text(reply, grade):
    verdict = GradeVerdict.from_text(reply)
    assert (verdict.grade if verdict else None) == grade


def test_llm_grader_counts_garbage_apart_and_caches(tmp_path):
    q = question()
    script = Script(
        (200, "CORRECT"),
        (200, "INCORRECT"),
        (200, "lorem ipsum"),  # garbage, then the corrective retry ...
        (200, "still nothing"),  # ... garbage again: unparsed, never a grade
        (200, '{"grade": "NOT_ATTEMPTED"}'),
        (200, '{"grade": "MAYBE"}'),  # not a grade of the rubric ...
        (200, "no idea"),  # ... and garbage on the retry
    )
    grader = Grader(client(script, tmp_path))
    answers = ["Ada Lovelace", "Babbage", "Ada", "unsure", "Ada L."]
    graded = [grader.grade(q, Prediction(a, "answered", "llm")) for a in answers]
    assert [(g.status, g.grade) for g in graded] == [
        ("graded", "CORRECT"),
        ("graded", "INCORRECT"),
        ("unparsed", None),
        ("graded", "NOT_ATTEMPTED"),
        ("unparsed", None),
    ]
    assert all(g.grader == "llm" for g in graded)
    assert grader.llm is not None and grader.llm.usage.counters["irb_grade.unparsed"] == 2
    assert "<predicted_answer>" in script.requests[0]["messages"][1]["content"]
    assert grader.grade(q, Prediction(None, "unparsed", "llm")).grade == "NOT_ATTEMPTED"  # no call: nothing to grade
    assert len(script.requests) == 7
    again = Grader(client(Script(), tmp_path))  # no replies left: from the cache
    assert again.grade(q, Prediction("Ada Lovelace", "answered", "llm")).grade == "CORRECT"


def test_false_premise_gold_is_shown_to_the_llm_grader(tmp_path):
    script = Script((200, "CORRECT"))
    Grader(client(script, tmp_path)).grade(question(expected="reject_premise"), Prediction("no", "answered", "llm"))
    assert "premise is false" in script.requests[0]["messages"][1]["content"]


def test_answerers_scripted_and_offline(tmp_path):
    q = question()
    passages = [passage("c1", "a1", "Rain fell. Ada Lovelace founded the Analytical Society in Quillport.")]
    script = Script((200, '{"answer": " Ada Lovelace "}'), (200, "garbage"), (200, "more garbage"))
    llm = Answerer(client(script, tmp_path))
    assert llm.rag(q, passages) == Prediction("Ada Lovelace", "answered", "llm")
    assert "<passage_1>" in script.requests[0]["messages"][1]["content"]
    assert llm.closed_book(q) == Prediction(None, "unparsed", "llm")
    assert "passage" not in script.requests[1]["messages"][1]["content"]
    offline = Answerer(None)
    assert offline.closed_book(q).text is None  # closed-book offline: no model, no answer
    assert offline.rag(q, passages).text == "Ada Lovelace founded the Analytical Society in Quillport."
    assert extractive(q.question, []).status == "none"


# --- the questions file


def test_questions_file_errors_name_the_problem(tmp_path):
    with pytest.raises(IRBFileError, match="no IRB questions file") as missing:
        load_questions(tmp_path / "absent.jsonl")
    assert missing.value.reason == "missing_file"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(question().model_dump_json() + "\n" + json.dumps({"kind": "irb_question"}) + "\n")
    with pytest.raises(IRBFileError, match=r"bad.jsonl:2"):
        load_questions(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(IRBFileError, match="holds no IRB questions"):
        load_questions(empty)
    good = tmp_path / "good.jsonl"
    good.write_text(question().model_dump_json() + "\n\n" + question(qid="q2").model_dump_json() + "\n")
    assert [q.id for q in load_questions(good)] == ["q1", "q2"]


# --- the report tables


def _result(qid, premise, hops, right, grades, ndcg):
    from newskg.evaluation.irb.run import AnswerOutcome, QuestionResult, RetrievalOutcome

    def answer(grade):
        status = "unparsed" if grade is None else "graded"
        return AnswerOutcome(answer="x", answer_status="answered", mode="llm", grade_status=status, grade=grade)

    return QuestionResult(
        id=qid,
        question="?",
        as_of=20260102,
        expected="answer" if premise == "valid" else "reject_premise",
        hops=hops,
        premise=premise,
        paraphrase="none",
        popularity=5,
        popularity_bucket="3-9",
        qrels={"a1": 1},
        retrieval={"bm25": RetrievalOutcome(ndcg=ndcg, documents=[], passages=[], right=right, any_relevant=right)},
        answers={"closed-book": answer(grades[0]), "rag:bm25": answer(grades[1])},
    )


def test_report_tables_are_consistent_with_the_answers(tmp_path):
    from newskg.evaluation.irb.run import IRBRun

    results = [
        _result("q1", "valid", 1, True, ("INCORRECT", "CORRECT"), 1.0),
        _result("q2", "valid", 2, False, ("NOT_ATTEMPTED", "INCORRECT"), 0.0),
        _result("q3", "valid", 1, True, ("CORRECT", None), 0.5),  # an unparsed RAG grade: outside the shares
        _result("q4", "false", 1, False, ("INCORRECT", "NOT_ATTEMPTED"), 0.25),
    ]
    run = IRBRun(
        questions_file="f",
        grader="llm",
        answer_mode="llm",
        retrievers=["bm25"],
        settings=["closed-book", "rag:bm25"],
        results=results,
    )
    s = summarise(run)
    assert s.columns == ["all", "valid", "1-hop", "2-hop", "para:none", "pop:3-9", "false premise"]
    assert s.ndcg["bm25"]["all"] == pytest.approx((1.0 + 0.0 + 0.5 + 0.25) / 4)
    assert s.ndcg["bm25"]["1-hop"] == pytest.approx(0.75) and s.ndcg["bm25"]["false premise"] == 0.25
    rag = s.by_setting["rag:bm25"]
    assert (rag.questions, rag.graded, rag.unparsed) == (4, 3, 1) and s.unparsed_grades == 1
    assert (rag.correct, rag.incorrect, rag.not_attempted) == pytest.approx((1 / 3, 1 / 3, 1 / 3))
    assert s.correctness["closed-book"]["valid"] == pytest.approx(1 / 3)
    assert s.correctness["rag:bm25"]["false premise"] == 0.0
    right, wrong = s.retrieval_split["rag:bm25"]["right"], s.retrieval_split["rag:bm25"]["wrong"]
    assert (right.graded, right.correct) == (1, 1.0)  # q1 only (q3 unparsed)
    assert (wrong.graded, wrong.incorrect, wrong.not_attempted) == (2, 0.5, 0.5)
    assert right.questions + wrong.questions == rag.questions and "closed-book" not in s.retrieval_split
    assert s.retrieval_right == {"bm25": 0.5}
    header, rows = tables(s)["grades by setting (% of graded)"]
    assert header[:4] == ["setting", "C", "I", "N"] and rows[1] == ["rag:bm25", "33.3", "33.3", "33.3", "3", "1"]
    summary, paths = write_report(run, tmp_path / "out")
    assert all(p.stat().st_size > 0 for p in paths.values())
    assert paths["retrieval"].read_bytes()[:4] == b"\x89PNG"
    assert json.loads(paths["json"].read_text())["summary"] == summary.model_dump()
    assert "LLM grader" in paths["html"].read_text()


def test_evaluate_with_a_scripted_llm_answers_and_grades_every_setting(tmp_path):
    from newskg.evaluation.irb.retrieval import Rankers
    from newskg.evaluation.irb.run import Methods, evaluate

    passages = {
        "c1": passage("c1", "a1", "Ada Lovelace founded the Analytical Society in Quillport.", 20260101, BASE_MS),
        "c2": passage("c2", "a2", "The Quillport harbour reopened.", 20260101, BASE_MS),
        "c9": passage("c9", "a9", "Babbage founded the Analytical Society.", 20260105, BASE_MS + 4 * DAY_MS),  # later
    }
    script = Script(
        (200, '{"answer": "Ada Lovelace"}'),  # RAG over BM25
        (200, "CORRECT"),  # its grade
        (200, '{"answer": "I don\'t know"}'),  # closed-book
        (200, "garbage"),  # its grade: garbage twice → unparsed
        (200, "more garbage"),
    )
    llm = client(script, tmp_path)
    methods = Methods(Rankers(passages, None), ["bm25"], ["closed-book", "rag"], Answerer(llm), Grader(llm))
    run = evaluate([question()], methods)
    (result,) = run.results
    assert run.grader == "llm" and run.answer_mode == "llm" and run.settings == ["closed-book", "rag:bm25"]
    found = result.retrieval["bm25"]
    assert found.passages[0] == "c1" and "c9" not in found.passages  # published after the question's day
    assert found.documents[0] == "a1" and found.ndcg == 1.0 and found.right
    assert "Ada Lovelace founded" in script.requests[0]["messages"][1]["content"]
    assert (result.answers["rag:bm25"].grade, result.answers["closed-book"].grade_status) == ("CORRECT", "unparsed")
    assert summarise(run).unparsed_grades == 1
