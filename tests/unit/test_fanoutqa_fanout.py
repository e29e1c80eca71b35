"""Fan-out answering, the pure parts: offline decomposition rules, the LLM decomposer with scripted replies,
aggregation of sub-answers into a dict or list, the window, and the generator's rejection rules."""

import json

import pytest

from newskg.evaluation.fanoutqa.answerers import ClosedBookAnswerer, Window, aggregate, rerank
from newskg.evaluation.fanoutqa.decompose import Decomposer, decompose_offline
from newskg.evaluation.fanoutqa.generate import QUESTION, Fact, Neighbour, one_article_answers, rejection
from newskg.graph.store.asof import AsOf
from newskg.qa.evidence import Evidence
from tests.unit.test_llm_extraction import Script, client


@pytest.mark.parametrize(
    ("question", "list_question", "attribute"),
    [
        (
            "What is the batting hand of each of the first five picks in the 1998 MLB draft?",
            "What are the first five picks in the 1998 MLB draft?",
            "What is the batting hand of Ken Griffey?",
        ),
        (
            "Who are the directors of the top 5 highest-grossing films?",
            "What are the top 5 highest-grossing films?",
            "Who is the directors of Ken Griffey?",
        ),
        (
            "What are the mythical Pokemon introduced between generations 1 and 3, and what is their typing?",
            "What are the mythical Pokemon introduced between generations 1 and 3?",
            "What is the typing of Ken Griffey?",
        ),
        (
            "What is the population of the five smallest countries, by area, located in the largest continent?",
            "What are the five smallest countries, by area, located in the largest continent?",
            "What is the population of Ken Griffey?",
        ),
        (
            "For each city that hosted the Olympics after 2000, what is its population?",
            "Which city hosted the Olympics after 2000?",
            "For Ken Griffey (the city that hosted the Olympics after 2000): what is its population?",
        ),
    ],
)
def test_offline_rules_split_list_and_attribute_shapes(question, list_question, attribute):
    plan = decompose_offline(question)
    assert plan.by == "rules" and plan.fans_out
    assert plan.list_question == list_question
    assert plan.attribute("Ken Griffey") == attribute


def test_a_generated_question_decomposes_into_its_hub_list_and_a_day_per_item():
    question = QUESTION.format(hub="Fallemoor Bakeries", first="2033-06-01", last="2034-06-01")
    plan = decompose_offline(question)
    assert plan.by == "rules"
    assert "Fallemoor Bakeries" in plan.list_question and "2033-06-01 and 2034-06-01" in plan.list_question
    assert plan.attribute("Quenowick") == (
        "For Quenowick (the entity that Fallemoor Bakeries had a reported interaction with between 2033-06-01 and "
        "2034-06-01): on what day did that interaction take place?"
    )


def test_a_question_no_rule_fits_is_answered_whole():
    plan = decompose_offline("Name the U.S. Senators who represent the states in the Pacific region.")
    assert plan.by == "whole" and not plan.fans_out and plan.attribute_template == ""


def _reply(payload: dict) -> tuple[int, str]:
    return 200, json.dumps(payload)


def test_the_llm_decomposes_when_configured(tmp_path):
    script = Script(
        _reply({"list_question": "Who were the picks?", "attribute_question": "Which hand does {item} bat?"})
    )
    plan = Decomposer(client(script, tmp_path))("Which hand did each of the first picks bat with?")
    assert plan.by == "llm" and plan.attribute("Ken Griffey") == "Which hand does Ken Griffey bat?"
    assert "Which hand did each of the first picks" in script.requests[0]["messages"][-1]["content"]


def test_an_llm_step_without_the_item_placeholder_falls_back_to_the_rules(tmp_path):
    script = Script(_reply({"list_question": "Who were the picks?", "attribute_question": "Which hand?"}))
    llm = client(script, tmp_path)
    plan = Decomposer(llm)("What is the batting hand of each of the first five picks in the 1998 MLB draft?")
    assert plan.by == "rules" and plan.list_question == "What are the first five picks in the 1998 MLB draft?"


def test_aggregation_makes_a_dict_of_the_items_that_have_a_sub_answer():
    answer = aggregate(["A", "B", "C", "A"], ["2034-01-01", None, ["x", "y"], "later"])
    assert answer == {"A": "2034-01-01", "C": "x, y"}  # first sub-answer of an item kept; lists flattened


def test_aggregation_without_attribute_is_the_list_of_items():
    assert aggregate(["A", "B", "A"], None) == ["A", "B"]


def test_aggregation_keeps_numbers_and_booleans_typed():
    assert aggregate(["A", "B"], [3, True]) == {"A": 3, "B": True}


def test_rerank_keeps_the_k_pieces_closest_to_the_sub_question():
    found = [
        Evidence(f"i{n}", "interaction", text, 20340101) for n, text in enumerate(["a b", "hub x met y", "c", "hub"])
    ]
    assert [e.id for e in rerank("when did hub x meet y", found, 2)] == ["i1", "i3"]


def test_window_comes_from_the_question_dates():
    window = Window.of(QUESTION.format(hub="H", first="2034-01-01", last="2034-03-31"))
    assert (window.first, window.last) == (20340101, 20340331)
    assert window.holds(20340215) and not window.holds(20340401) and not window.holds(20331231)
    assert Window.of("no dates here").holds(19000101)


def _neighbour(name: str, days: list[int], articles: list[list[str]]) -> Neighbour:
    n = Neighbour(f"e_{name}", name)
    for k, (day, arts) in enumerate(zip(days, articles, strict=True)):
        n.facts.append(Fact(f"i_{name}{k}", day, arts, []))
    return n


def test_a_question_one_article_answers_is_rejected():
    shared = [_neighbour(f"N{k}", [20340101 + k], [["a_shared", f"a_{k}"]]) for k in range(5)]
    assert one_article_answers(shared)
    assert rejection("Hub", shared, 5) == "one_article_holds_all"
    spread = [_neighbour(f"N{k}", [20340101 + k], [[f"a_{k}", "a_shared" if k else "a_0b"]]) for k in range(5)]
    assert not one_article_answers(spread) and rejection("Hub", spread, 5) is None


def test_a_question_whose_answer_is_not_unique_is_rejected():
    two_days = [_neighbour(f"N{k}", [20340101, 20340102 + k], [[f"a{k}"], [f"b{k}"]]) for k in range(5)]
    assert rejection("Hub", two_days, 5) == "not_unique_days"
    same_name = [_neighbour("Same" if k < 2 else f"N{k}", [20340101], [[f"a{k}"]]) for k in range(5)]
    same_name[1].id = "e_other"
    assert rejection("Hub", same_name, 5) == "not_unique_names"
    names_hub = [_neighbour(f"N{k}", [20340101], [[f"a{k}"]]) for k in range(5)]
    assert rejection("n3", names_hub, 5) == "not_unique_names"


def test_a_hub_with_too_few_neighbours_is_rejected():
    few = [_neighbour(f"N{k}", [20340101], [[f"a{k}"]]) for k in range(4)]
    assert rejection("Hub", few, 5) == "too_few_neighbours"


def test_closed_book_asks_the_llm_alone_and_keeps_its_structured_answer(tmp_path):
    script = Script(_reply({"answer": {"Ken Griffey": "left"}}), (200, "no json at all"), (200, "still none"))
    answerer = ClosedBookAnswerer(client(script, tmp_path))
    trace = answerer.answer("q1", "What is the batting hand of each of the first picks?", AsOf(20231120))
    assert trace.answer == {"Ken Griffey": "left"} and trace.steps[0].kind == "whole"
    assert "2023-11-20" in script.requests[0]["messages"][-1]["content"]
    unparsed = answerer.answer("q2", "Another question?", AsOf(20231120))
    assert unparsed.answer is None  # an unparsable reply is no answer (scores 0), never a made-up one
