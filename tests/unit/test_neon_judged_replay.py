"""`newskg eval replay --scores judges` end to end below the CLI: the replayer with the judge scorers (zero- and
few-shot) over a scripted OpenAI-compatible endpoint (tests/support/llm.py: the real openai SDK and our client),
then the report writer. The resolver and retriever are stand-ins returning fixed evidence (the as-of reads
themselves are tests/integration/test_neon_replay.py's); what is under test is scoring and reporting."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx

from newskg.core.timeaxes import day_iso
from newskg.evaluation.neon.methods import METHODS
from newskg.evaluation.neon.replay import Replayer, ReplayPlan, ReplayQuery
from newskg.evaluation.neon.report import Grid, write_report
from newskg.evaluation.neon.scoring import JUDGE_ATTRIBUTES, scorers
from newskg.evaluation.neon.spikes import SpikeRule, detect
from newskg.graph.store.asof import AsOf
from newskg.qa.evidence import Evidence
from newskg.qa.query import EntityChoice
from newskg.qa.similarity import QueryTexts
from tests.support.llm import chat_completion, scripted_client

DAY = 20230829
DOJA = EntityChoice("e-doja", "Doja Cat", "PERSON", 100.0, 3)
TOUR, LAWSUIT = "Doja Cat tour", "Doja Cat lawsuit"  # the lawsuit's zero-shot faithfulness verdict is malformed
METHOD_NAMES, STRATEGIES, KS = ["newsrag", "m0"], ["temporal", "generic"], [5, 10]


class FixedResolver:
    def find(self, query: str, as_of: AsOf | int | str | None = None):
        return "Doja Cat", query.removeprefix("Doja Cat ").strip(), (DOJA, [])


class FixedRetriever:
    """Two chunks for NewsRAG, three interactions for NEON(M0), whatever the strategy."""

    mirror = None

    def retrieve_method(self, method, strategy, entity_id, text: str | QueryTexts, as_of: AsOf, k: int):
        kind = "chunk" if method == "newsrag" else "interaction"
        n = 2 if method == "newsrag" else 3
        return [
            Evidence(f"{method}-{i}", kind, f"Doja Cat announced a tour with Ice Spice ({i}).", DAY, DAY)
            for i in range(n)
        ][:k]


class JudgeEndpoint:
    """Answers each judge call by its attribute and variant; the lawsuit's zero-shot faithfulness is malformed on
    the first try and on the corrective retry alike."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bool, str]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        user = json.loads(request.content)["messages"][1]["content"]
        attribute = re.search(r"The quality to grade is (\w+):", user)
        assert attribute
        few_shot = "## Worked examples" in user
        query = TOUR if TOUR.lower() in user.lower() else LAWSUIT
        self.calls.append((attribute[1], few_shot, query))
        return chat_completion(self.verdict(attribute[1], few_shot, query))

    @staticmethod
    def verdict(attribute: str, few_shot: bool, query: str) -> str:
        if attribute == "faithfulness" and not few_shot and query == LAWSUIT:
            return "The answer looks faithful to me, rating {two}."
        rating = {"helpfulness": 2, "relevance": 1, "faithfulness": 2 if few_shot else 0}[attribute]
        shot = "few" if few_shot else "zero"
        return json.dumps({"rating": rating, "reason": f"{shot}-shot {attribute} of {query}"})


def judged_replay(tmp_path: Path):
    endpoint = JudgeEndpoint()
    chosen = scorers(scripted_client(endpoint))
    replayer = Replayer(FixedResolver(), FixedRetriever(), None, chosen)  # pyright: ignore[reportArgumentType]  # stand-ins
    plan = ReplayPlan([METHODS[m] for m in METHOD_NAMES], STRATEGIES, KS)
    queries = [ReplayQuery(q, DAY, DOJA.id, DOJA.name, 7, "log") for q in (TOUR, LAWSUIT)]
    records = replayer.replay(queries, plan)
    spikes = [detect({DAY - 9 + i: 9 if i == 9 else 1 for i in range(12)}, DAY - 9, DAY + 2, SpikeRule(), DOJA.id, "D")]
    meta = {
        "origin": "query log",
        "rule": {"window": 3, "sigma": 1.0},
        "log": None,
        "queries": len(queries),
        "spike_days": 1,
        "methods": METHOD_NAMES,
        "strategies": STRATEGIES,
        "ks": KS,
        "runs": len(records),
        "answerer": "extractive (offline)",
        "scores": ", ".join(s.name for s in chosen),
    }
    _, paths = write_report(tmp_path, records, chosen, spikes, meta, Grid(METHOD_NAMES, STRATEGIES, KS))
    return endpoint, records, paths


def test_judged_replay_writes_zero_and_few_shot_tables_with_rationales_and_unparsed_counts(tmp_path):
    endpoint, records, paths = judged_replay(tmp_path)
    report = json.loads(paths["json"].read_text())
    runs = len(METHOD_NAMES) * len(STRATEGIES) * len(KS) * 2
    assert len(records) == len(report["runs"]) == runs

    # NEON Tables 4 and 5: one judge table per variant, method × strategy rows at each method's own k
    assert set(report["tables"]) == {"judge-zero-shot", "judge-few-shot"}
    for table in report["tables"].values():
        assert (table["family"], table["scale_max"]) == ("judge", 2.0)
        shape = [(r["strategy"], r["method"], r["k"], r["runs"]) for r in table["rows"]]
        assert shape == [(s, m, 5 if m == "newsrag" else 10, 2) for s in STRATEGIES for m in METHOD_NAMES]
        assert all(list(r["attributes"]) == list(JUDGE_ATTRIBUTES) for r in table["rows"])

    zero = {(r["strategy"], r["method"]): r["attributes"] for r in report["tables"]["judge-zero-shot"]["rows"]}
    few = {(r["strategy"], r["method"]): r["attributes"] for r in report["tables"]["judge-few-shot"]["rows"]}
    for cell in zero:
        # the lawsuit's malformed verdict is unparsed, never a 0: the mean is the tour's 0 alone, over n = 1
        assert (zero[cell]["faithfulness"]["mean"], zero[cell]["faithfulness"]["n"]) == (0.0, 1)
        assert zero[cell]["faithfulness"]["unparsed"] == 1
        assert (zero[cell]["helpfulness"]["mean"], zero[cell]["helpfulness"]["unparsed"]) == (2.0, 0)
        assert (few[cell]["faithfulness"]["mean"], few[cell]["faithfulness"]["n"]) == (2.0, 2)
        assert few[cell]["faithfulness"]["unparsed"] == 0
        assert (few[cell]["relevance"]["mean"], few[cell]["relevance"]["n"]) == (1.0, 2)
    assert report["unparsed"] == {
        "judge-zero-shot": {"helpfulness": 0, "relevance": 0, "faithfulness": runs // 2},
        "judge-few-shot": {"helpfulness": 0, "relevance": 0, "faithfulness": 0},
    }

    # every judgement with its rationale in report.json; the malformed one has no score and no rationale
    for run in report["runs"]:
        for name, shot in (("judge-zero-shot", "zero"), ("judge-few-shot", "few")):
            attributes = run["judgements"][name]["attributes"]
            assert list(attributes) == list(JUDGE_ATTRIBUTES)
            for attribute, graded in attributes.items():
                if name == "judge-zero-shot" and attribute == "faithfulness" and run["query"] == LAWSUIT:
                    assert (graded["score"], graded["parsed"], graded["rationale"]) == (None, False, "")
                    raw = next(a for a in run["judgements"][name]["raw"]["attributes"] if a["attribute"] == attribute)
                    assert raw["attempts"] == 2  # retried once, then counted unparsed
                else:
                    assert graded["parsed"] is True
                    assert graded["rationale"] == f"{shot}-shot {attribute} of {run['query']}"

    # judge scores only: no proxy attribute in any judgement, table or curve
    assert "proxy_" not in json.dumps(
        {k: report[k] for k in ("tables", "topk", "lengths", "unparsed")} | {"runs": report["runs"]}
    )

    # one call per attribute and variant per answer, plus one retry per malformed verdict
    assert len(endpoint.calls) == runs * len(JUDGE_ATTRIBUTES) * 2 + runs // 2
    page = paths["html"].read_text()
    assert "LLM judge, 0–2 (judge-zero-shot)" in page and "LLM judge, 0–2 (judge-few-shot)" in page
    assert "unparsed=1" in page and "PROXIES" not in page
    assert paths["topk-judge-zero-shot"].stat().st_size > 0 and paths["topk-judge-few-shot"].stat().st_size > 0
    assert all(r["day"] == day_iso(DAY) for r in report["runs"])


def test_the_cli_summary_shows_the_unparsed_verdicts(tmp_path):
    from newskg.cli.neon import _render_replay
    from newskg.cli.output import console

    _, _, paths = judged_replay(tmp_path)
    report = json.loads(paths["json"].read_text())
    shown = {k: report[k] for k in ("meta", "tables", "unparsed", "no_evidence")} | {"report": {"html": "r.html"}}
    with console.capture() as captured:
        _render_replay(shown)
    text = captured.get()
    assert "judge-zero-shot: unparsed verdicts helpfulness 0, relevance 0, faithfulness 8" in text
    assert "judge-few-shot: unparsed" not in text and "LLM judge, 0-2" in text
