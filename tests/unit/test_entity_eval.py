"""The entity evaluation (`newskg eval entities`): the gold set is exact, its loader refuses bad files, the
scorer's figures are right on constructed cases, and the evaluation runs on the NEON Doja Cat document."""

import json
import os
from pathlib import Path

import pytest

from newskg.evaluation.entities.gold import GoldDocument, GoldError, GoldMention, load_gold, split_documents
from newskg.evaluation.entities.run import BASELINE, DEFAULTS, NO_RULES, configurations, evaluate, paragraphs
from newskg.evaluation.entities.scoring import DocumentPrediction, Predicted, core_span, score
from newskg.extract.entities.rules import EntityRules
from newskg.extract.entities.types import ENTITY_TYPES
from tests.support.cli import newskg

GOLD = Path(__file__).resolve().parents[1] / "fixtures" / "entities" / "gold.jsonl"


def test_every_gold_span_is_exactly_its_text():
    lines = [json.loads(line) for line in GOLD.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert len(lines) == 26 and lines[-1]["id"] == "neon-doja-cat"
    for doc in lines:
        for m in doc["mentions"]:
            assert doc["text"][m["start"] : m["end"]] == m["text"], (doc["id"], m)
            assert m["type"] in ENTITY_TYPES and m["canonical"].strip()
    assert len(load_gold(GOLD)) == 26  # and the loader's own checks pass


def test_every_person_and_org_short_form_of_the_doja_cat_passage_is_annotated():
    doc = next(d for d in load_gold(GOLD) if d.id == "neon-doja-cat")
    pairs = {(m.text, m.canonical) for m in doc.mentions if m.type == "PERSON"}
    assert {("Leto", "Jared Leto"), ("Karl", "Karl Lagerfeld"), ("Lagerfeld", "Karl Lagerfeld")} <= pairs
    assert sum(m.text == "Jared Leto" for m in doc.mentions) == 2


def _write(tmp_path: Path, *docs: dict) -> Path:
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in docs), encoding="utf-8")
    return path


def _doc(mentions: list[dict], doc_id: str = "d") -> dict:
    return {"id": doc_id, "source": "test", "text": "Jared Leto met Karl.", "mentions": mentions}


LETO = {"start": 0, "end": 10, "text": "Jared Leto", "type": "PERSON", "canonical": "Jared Leto"}


@pytest.mark.parametrize(
    ("mentions", "problem"),
    [
        ([{**LETO, "end": 9}], "the text there is"),
        ([{**LETO, "type": "CELEBRITY"}], "is not one of"),
        ([{**LETO, "canonical": " "}], "empty canonical"),
        ([LETO, {**LETO, "start": 6, "text": "Leto"}], "overlaps"),
        ([{**LETO, "end": 99}], "outside the text"),
    ],
)
def test_the_loader_refuses_wrong_spans_types_and_overlaps(tmp_path, mentions, problem):
    with pytest.raises(GoldError, match=problem):
        load_gold(_write(tmp_path, _doc(mentions)))


def test_the_loader_refuses_duplicate_ids_and_broken_lines(tmp_path):
    with pytest.raises(GoldError, match="more than once"):
        load_gold(_write(tmp_path, _doc([LETO]), _doc([LETO])))
    (tmp_path / "bad.jsonl").write_text('{"id": "x"}\n', encoding="utf-8")
    with pytest.raises(GoldError, match="line 1"):
        load_gold(tmp_path / "bad.jsonl")


TEXT = "Jared Leto met Acme Corp in Paris. Leto said the company was kind. She left."
#       0         1         2         3         4         5         6         7
#       0123456789012345678901234567890123456789012345678901234567890123456789012345


def _gold() -> GoldDocument:
    def m(start: int, end: int, kind: str, canonical: str) -> GoldMention:
        return GoldMention(start=start, end=end, text=TEXT[start:end], type=kind, canonical=canonical)

    return GoldDocument(
        id="d",
        source="test",
        text=TEXT,
        mentions=[
            m(0, 10, "PERSON", "Jared Leto"),
            m(15, 24, "ORG", "Acme Corp"),
            m(28, 33, "PLACE", "Paris"),
            m(35, 39, "PERSON", "Jared Leto"),
        ],
    )


def test_exact_precision_recall_f1_by_type_and_lenient_overlap():
    predicted = [
        Predicted(0, 10, "Jared Leto", "PERSON", "e1"),  # right
        Predicted(15, 19, "Acme", "ORG", "e2"),  # overlaps Acme Corp: lenient only
        Predicted(28, 33, "Paris", "ORG", "e3"),  # right span, wrong type
        Predicted(35, 39, "Leto", "PERSON", "e1"),  # right
        Predicted(66, 69, "She", "PERSON", "e1"),  # a pronoun: not scored
        Predicted(45, 56, "the company", "ORG", "e2"),  # a description: not scored
    ]
    names = {"e1": {"jared leto", "leto"}, "e2": {"acme"}, "e3": {"paris"}}
    s = score([_gold()], {"d": DocumentPrediction("d", predicted, names)})
    assert (s.exact["PERSON"].precision, s.exact["PERSON"].recall, s.exact["PERSON"].f1) == (1.0, 1.0, 1.0)
    assert (s.exact["ORG"].gold, s.exact["ORG"].predicted, s.exact["ORG"].correct) == (1, 2, 0)
    assert s.exact["ORG"].f1 == 0.0 and s.lenient["ORG"].correct == 1
    assert s.exact["PLACE"].recall == 0.0 and s.exact["PLACE"].precision is None
    assert (s.exact["all"].correct, s.exact["all"].predicted, s.exact["all"].gold) == (2, 4, 4)
    assert s.exact["all"].f1 == pytest.approx(0.5)
    assert s.exact["any type"].correct == 3
    assert s.not_names == 2
    # Found spans: Jared Leto, Paris, Leto; Paris has the wrong type.
    assert (s.type_accuracy.correct, s.type_accuracy.total) == (2, 3)
    assert (s.linking_accuracy.correct, s.linking_accuracy.total) == (3, 3)
    assert (s.short_form_linking.correct, s.short_form_linking.total) == (1, 1)


def test_linking_needs_one_entity_named_by_the_canonical_and_no_merge_with_another():
    gold = [_gold()]

    def linking(entities: tuple[str, str, str, str], names: dict[str, set[str]]) -> tuple[int, int]:
        spans = [(0, 10, "PERSON"), (15, 24, "ORG"), (28, 33, "PLACE"), (35, 39, "PERSON")]
        predicted = [Predicted(s, e, TEXT[s:e], k, i) for (s, e, k), i in zip(spans, entities, strict=True)]
        a = score(gold, {"d": DocumentPrediction("d", predicted, names)}).linking_accuracy
        return a.correct, a.total

    named = {"e1": {"jared leto"}, "e2": {"acme corp"}, "e3": {"paris"}, "e4": {"leto"}}
    # "Leto" on its own entity: the Jared Leto mentions split 1-1, the target (first) is e1, Leto is wrong.
    assert linking(("e1", "e2", "e3", "e4"), named) == (3, 4)
    # "Leto" on the full name's entity, known by its alias only: right.
    assert linking(("e4", "e2", "e3", "e4"), {**named, "e4": {"leto", "jared leto"}}) == (4, 4)
    # One entity for Jared Leto and Paris: merged, all three wrong.
    assert linking(("e1", "e2", "e1", "e1"), {**named, "e1": {"jared leto", "paris"}}) == (1, 4)
    # The right grouping under a name that is not the canonical: wrong.
    assert linking(("e4", "e2", "e3", "e4"), named) == (2, 4)


def test_spans_compare_without_the_titles_possessives_and_quotes_the_project_strips():
    text = 'Said President Trump\'s aide to "the White House".'
    assert text[slice(*core_span(text, 5, 22))] == "Trump"
    assert text[slice(*core_span(text, 31, 48))] == "White House"


def test_paragraph_offsets_point_into_the_document():
    text = "First para.\n\n  Second one\nthird"
    assert [(p.offset, p.text) for p in paragraphs(text)] == [(0, "First para."), (15, "Second one"), (26, "third")]
    assert all(text[p.offset : p.offset + len(p.text)] == p.text for p in paragraphs(text))


def test_configurations_follow_the_rule_names_cumulatively():
    names = [c.name for c in configurations()]
    assert names[:2] == [BASELINE, NO_RULES]
    assert names[2 : 2 + len(EntityRules.names())] == [f"+ {rule}" for rule in EntityRules.names()]
    assert configurations()[1 + len(EntityRules.names())].rules == EntityRules.none().with_rules(*EntityRules.names())
    assert configurations()[-1].rules == EntityRules()  # the last one is what the extract stage runs
    assert (names[-1] == DEFAULTS) == (EntityRules() != EntityRules.none().with_rules(*EntityRules.names()))


def test_the_evaluation_runs_on_the_doja_cat_passage():
    doc = next(d for d in load_gold(GOLD) if d.id == "neon-doja-cat")
    results = list(evaluate([doc]))
    assert [r.configuration.name for r in results] == [c.name for c in configurations()]
    for r in results:
        s = r.scores
        assert s.exact["PERSON"].gold == 14 and s.exact["all"].gold == len(doc.mentions)
        for figure in (s.exact["PERSON"].recall, s.type_accuracy.value, s.linking_accuracy.value):
            assert figure is not None and 0.0 <= figure <= 1.0
    baseline = results[0].scores
    # The model alone links nothing beyond the exact name: no short form ("Leto", "Karl") reaches its full name.
    assert baseline.short_form_linking.total >= 1 and baseline.short_form_linking.correct == 0
    # Today the small model misses "Jared Leto" in both places it occurs (issue 16): the baseline's recall says so.
    leto = [m for m in results[0].predictions[doc.id].mentions if m.text == "Jared Leto"]
    assert leto == []


def _cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")}
    env["NEWSKG_DATA_DIR"] = str(tmp_path / "data")
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    return env


def test_eval_entities_command_prints_every_configuration_and_writes_the_reports(tmp_path):
    doc = next(line for line in GOLD.read_text(encoding="utf-8").splitlines() if '"neon-doja-cat"' in line)
    gold = tmp_path / "doja.jsonl"
    gold.write_text(doc + "\n", encoding="utf-8")
    out = tmp_path / "report"
    proc = newskg("eval", "entities", "--gold", str(gold), "--out", str(out), "--json", env=_cli_env(tmp_path))
    data = json.loads(proc.stdout)
    assert [c["name"] for c in data["report"]["configurations"]] == [c.name for c in configurations()]
    assert data["report"]["gold_mentions"] == 18
    assert all((out / name).is_file() for name in ("report.json", "report.html", "entities.png"))
    assert "errors" in json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_eval_entities_command_refuses_a_bad_gold_file(tmp_path):
    gold = _write(tmp_path, _doc([{**LETO, "end": 9}]))
    proc = newskg("eval", "entities", "--gold", str(gold), env=_cli_env(tmp_path), check=False)
    assert proc.returncode == 2 and "the text there is" in proc.stderr


def test_the_builder_takes_longest_surfaces_first_and_refuses_a_surface_not_in_the_text():
    from newskg.evaluation.entities.annotate import find_mentions

    text = "Jared Leto and Leto, not Letokov."
    rows = [("Leto", "PERSON", "Jared Leto"), ("Jared Leto", "PERSON", "Jared Leto")]
    assert [(m.start, m.end, m.text) for m in find_mentions("d", text, rows)] == [
        (0, 10, "Jared Leto"),
        (15, 19, "Leto"),
    ]
    with pytest.raises(SystemExit, match="occurs nowhere"):
        find_mentions("d", text, [("Karl", "PERSON", "Karl Lagerfeld")])


def test_long_bodies_are_cut_at_a_line_break_before_2500_characters():
    from newskg.evaluation.entities.annotate import MAX_CHARS, cut

    body = ("A sentence of news. " * 50 + "\n") * 5
    text = cut(body)
    assert len(text) <= MAX_CHARS and body.startswith(text) and body[len(text) :].lstrip(" ")[0] == "\n"
    assert cut("short\nbody") == "short\nbody"


def test_the_dev_and_test_splits_are_disjoint_halves_by_sorted_id_parity():
    docs = load_gold(GOLD)
    dev, test = split_documents(docs, "dev"), split_documents(docs, "test")
    ids = sorted(d.id for d in docs)
    assert [d.id for d in dev] == [d.id for d in docs if d.id in ids[0::2]]  # file order kept
    assert {d.id for d in test} == set(ids[1::2]) and len(dev) == len(test) == 13
    assert split_documents(docs, "all") == docs
    with pytest.raises(GoldError, match="unknown split"):
        split_documents(docs, "train")


def test_eval_entities_command_scores_only_the_chosen_split(tmp_path):
    lines = GOLD.read_text(encoding="utf-8").splitlines()[:4]
    gold = tmp_path / "four.jsonl"
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ids = sorted(json.loads(line)["id"] for line in lines)
    expected = sum(len(json.loads(line)["mentions"]) for line in lines if json.loads(line)["id"] in ids[1::2])
    args = ("eval", "entities", "--gold", str(gold), "--split", "test", "--out", str(tmp_path / "r"), "--json")
    data = json.loads(newskg(*args, env=_cli_env(tmp_path)).stdout)
    assert data["report"]["split"] == "test" and data["report"]["documents"] == 2
    assert data["report"]["gold_mentions"] == expected
