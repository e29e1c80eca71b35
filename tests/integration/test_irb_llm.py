"""IRB's LLM paths over the wire against the local llama.cpp server (`newskg services up --llm`): the rewording of
generated questions, RAG answering and the LLM grader.

SmolLM2-135M is far too small to word or grade well and may reply junk: this proves the wire path and the
guarantees around it — a rewording is kept only when its kept phrases, answer and premise checks still pass
(else the template stays, the reason counted); every answer is graded CORRECT / INCORRECT / NOT_ATTEMPTED or
counted unparsed, never a crash — not the quality of the model."""

from __future__ import annotations

import pytest

from bench.irb import LAST_DAY, load
from newskg.evaluation.irb.answer import Answerer, Grader
from newskg.evaluation.irb.generate import Checker, answer_holds, generate, leaks, premise_holds, question_id
from newskg.evaluation.irb.prompts import grade
from newskg.evaluation.irb.report import summarise
from newskg.evaluation.irb.retrieval import Rankers, load_passages
from newskg.evaluation.irb.run import Methods, evaluate
from newskg.graph.store.asof import AsOf
from newskg.wiring import Wiring

pytestmark = [pytest.mark.integration, pytest.mark.llm]

GRADES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")


def _grade_counters(llm) -> dict[str, int]:
    return {row["name"]: row["n"] for row in llm.cache.counters() if row["prompt"] == grade.NAME}


# At most seven short calls: seconds each on an idle machine, minutes each when the two cores are saturated
# (test_neon_judges_llm measured 218 s for one call at load 16), hence the generous limits.
@pytest.mark.timeout(1800)
def test_rewording_rag_answers_and_llm_grades_keep_their_guarantees(llm_stack, world):
    # A small graph written directly (the bench's facts, five to a chunk), its chunks in the mirror.
    chunks = load(world.store, 60, per_chunk=5)
    world.mirror.upsert_chunks(chunks)
    # Short replies: a rambling small model must not fill 512 tokens per call.
    settings = world.isolated.settings.model_copy(update={"llm_max_tokens": 64, "llm_timeout_s": 900.0})
    with Wiring(settings) as wiring:
        llm = wiring.llm()
        assert llm is not None and llm.cache is not None
        template = generate(world.store, LAST_DAY, n=3, seed=1)
        made = generate(world.store, LAST_DAY, n=3, seed=1, llm=llm)

        # Rewording changes wording only, and only when every check passes again.
        assert len(made.questions) == len(template.questions) >= 2
        checker = Checker(world.store, AsOf(LAST_DAY), "news")
        for q, t in zip(made.questions, template.questions, strict=True):
            same = ("answer", "masked", "bridge", "keypoints", "qrels", "premise", "paraphrase", "keep", "hops")
            assert {f: getattr(q, f) for f in same} == {f: getattr(t, f) for f in same}
            if q.wording == "llm":
                assert all(k.lower() in q.question.lower() for k in q.keep), q.question
                assert not leaks(q.question, q.answer, q.aliases if q.premise == "valid" else [])
                assert answer_holds(checker, q) and premise_holds(checker, q)
                assert q.id == question_id(q.as_of, q.question, q.answer)
            else:
                assert (q.question, q.id) == (t.question, t.id)  # the template kept
        kept_template = sum(n for reason, n in made.rejected.items() if reason.startswith("llm_"))
        assert sum(q.wording == "llm" for q in made.questions) + kept_template == len(made.questions)

        # RAG over BM25's top 5 and the LLM grader: every answer graded or counted unparsed.
        before = _grade_counters(llm)
        questions = made.questions[:2]
        methods = Methods(Rankers(load_passages(world.store), None), ["bm25"], ["rag"], Answerer(llm), Grader(llm))
        run = evaluate(questions, methods)
        assert run.grader == "llm" and run.answer_mode == "llm"
        asked = 0
        for result in run.results:
            a = result.answers["rag:bm25"]
            assert a.mode == "llm" and a.answer_status in ("answered", "unparsed", "failed")
            if a.grade_status == "unparsed":
                assert a.grade is None and a.answer
            else:
                assert a.grade_status == "graded" and a.grade in GRADES
            if not (a.answer or "").strip():
                assert a.grade == "NOT_ATTEMPTED"  # nothing to grade: no call
            else:
                asked += 1
        after = _grade_counters(llm)
        counted = {name: after.get(name, 0) - before.get(name, 0) for name in after}
        assert sum(counted.values()) == asked  # one outcome per graded answer: a grade or "unparsed"
        assert counted.get("unparsed", 0) == sum(r.answers["rag:bm25"].grade_status == "unparsed" for r in run.results)
        summary = summarise(run)
        cell = summary.by_setting["rag:bm25"]
        assert cell.questions == len(questions) and cell.graded + cell.unparsed == len(questions)
        assert summary.unparsed_grades == cell.unparsed
