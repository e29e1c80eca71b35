"""`newskg eval facts` (evaluation/facts): a sample that stays put as facts change, labels keyed by text and chunk,
precision with a Wilson interval, and the report files, on facts the stages' own code makes in process."""

import json

import pytest

from newskg.core.records import RawArticle
from newskg.core.settings import Settings
from newskg.evaluation.facts.collect import Fact, extract, item_key
from newskg.evaluation.facts.corpus import Corpus, Page
from newskg.evaluation.facts.labels import FactLabel, LabelError, LabelStore
from newskg.evaluation.facts.report import summary, write_report, write_todo
from newskg.evaluation.facts.run import FactsReport, _corpus_figures, _labelled_facts, figures
from newskg.evaluation.facts.sample import seeded_sample
from newskg.evaluation.facts.scoring import Proportion, wilson

STORY = (
    "Officers from the Dayton Police Department arrested Maria Lopez on Tuesday after a chase. "
    "Maria Lopez was released on bail on Wednesday, her lawyer said. "
    "Die Polizei in Berlin hat am Dienstag drei Männer festgenommen, teilte ein Sprecher mit."
)


def test_wilson_interval_matches_the_textbook_values():
    assert wilson(8, 10) == (0.4902, 0.9433)
    assert wilson(0, 5) == (0.0, 0.4345)
    assert Proportion.of(0, 0).value is None


def test_the_sample_keeps_its_unchanged_items_when_others_change():
    items = [f"fact {n}" for n in range(100)]
    first = seeded_sample(items, 20, 7, str)
    changed = [*items[:50], *(f"new {n}" for n in range(50))]
    second = seeded_sample(changed, 20, 7, str)
    kept = [x for x in first if x in changed]
    assert set(kept) <= set(second)  # every surviving sampled fact is still sampled
    assert seeded_sample(items, 20, 8, str) != first  # another seed, another sample


def test_labels_are_keyed_by_text_and_chunk_and_a_bad_line_is_refused(tmp_path):
    path = tmp_path / "labels.jsonl"
    key = item_key("X won", "X won on Monday.")
    label = FactLabel(key=key, text="X won", readable=True, true=True, subject_ok=False)
    path.write_text(label.model_dump_json() + "\n")
    store = LabelStore.load(path)
    assert not store.facts[key].clean and item_key("X won", "X won on Tuesday.") not in store.facts
    path.write_text('{"kind": "fact", "key": "k"}\n')
    with pytest.raises(LabelError, match=r"labels\.jsonl:1"):
        LabelStore.load(path)


def _page(text: str, key: str = "p1") -> Page:
    raw = RawArticle(text=text, fetched_at="2026-11-01T00:00:00Z", published="2026-10-01", source="test")
    return Page(Corpus.NEWS, key, raw)


def test_facts_come_from_the_stages_code_with_their_rule_and_no_fact_from_another_language():
    extracted = extract([_page(STORY), _page(STORY.split(". ")[-1], "p2")], Settings(_env_file=None))
    assert extracted.articles == 2
    rules = {f.rule for f in extracted.facts}
    assert rules and rules <= {"pair", "subject", "acting", "reported", "salient"}
    assert all(f.page == "p1" for f in extracted.facts)  # the German page gives chunks, no facts
    assert any("Maria Lopez" in f.text for f in extracted.facts)


def test_precision_counts_only_labelled_facts_and_the_report_is_written(tmp_path):
    facts = [
        Fact(Corpus.NEWS, "p", f"c{n}", f"chunk {n}", f"fact {n}", "X", "PERSON", None, "subject", "M0")
        for n in range(6)
    ]
    store = LabelStore(
        {
            f.key: FactLabel(key=f.key, text=f.text, readable=True, true=n < 3, subject_ok=True)
            for n, f in enumerate(facts[:4])
        },
        {},
    )
    sample = _labelled_facts(facts, 6, 1, store)
    got = figures(sample, [])
    assert (got["facts_sampled"], got["facts_labelled"]) == (6, 4)
    clean = sum(1 for x in sample if x.label and x.label.clean)
    assert got["fact_precision"] == round(clean / 4, 4)
    from newskg.evaluation.facts.collect import Extracted

    by_corpus = {Corpus.NEWS: _corpus_figures(Extracted(facts, [], 1, 6, []), sample, [])}
    report = FactsReport(**figures(sample, []), seed=1, labels="x", by_corpus=by_corpus, sample=sample, mentions=[])
    paths = write_report(report, tmp_path / "out")
    assert all(p.exists() for p in paths.values())
    assert json.loads(paths["json"].read_text())["facts_labelled"] == 4
    assert summary(report)["todo"] == 2 and write_todo(report, tmp_path / "todo.jsonl") == 2
