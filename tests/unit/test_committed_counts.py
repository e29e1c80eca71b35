"""`extract stats` counts what was committed, once; the LLM budget spent with work left is exit code 3."""

import json
from types import SimpleNamespace

from typer.testing import CliRunner

from newskg.core.llm.cache import LLMCache
from newskg.core.llm.client import BudgetExceeded
from newskg.extract.stage import ExtractAck, ExtractStage
from newskg.ingest.kafka.stage import StageOutput, StageRunner
from tests.support.fuzz import consumer_record
from tests.support.llm import Script, scripted_client
from tests.unit.test_m2_scheduler import NAMES, OBJ, SUBJ, Clock, PairGraph, answer
from tests.unit.test_outage_handling import Broker, FlakyStage


def ledger(cache: LLMCache) -> dict[str, int]:
    counts = {f"{r['prompt']}.{r['name']}": r["n"] for r in cache.counters()}
    counts |= {f"{r['prompt']}.{k}": r[k] for r in cache.usage() for k in ("calls", "cached", "failures") if r[k]}
    return counts


def test_review_finding_outcomes_reach_the_ledger_once_the_work_is_settled_and_only_once(tmp_path):
    """Review finding: "`extract stats` counters and LLM usage are incremented before the commit and again on each
    redelivery". Inside `deferring`, outcomes (cache hits, unparseable answers, counters) wait for `settle`; work
    handled again after an outage opens a new block and the first one is never settled. Spend (calls) is written
    as it happens: it was paid for either way."""
    from newskg.extract.m2_scheduler import M2Scheduler

    cache_path = tmp_path / "cache.sqlite"
    llm = scripted_client(Script(answer(1)), cache_path=cache_path)
    graph = PairGraph()
    graph.add(1, 2, 3)
    cache = LLMCache(cache_path)
    with llm.deferring() as first_try:
        llm.count("m1_chunk", "lines_kept", 2)
    assert ledger(cache) == {}  # not settled: that batch is handled again
    with llm.deferring() as second_try:
        llm.count("m1_chunk", "lines_kept", 2)
        # an M2 batch inside the handled batch is committed by its own graph write: it settles itself
        m2 = M2Scheduler(graph, llm, NAMES.__getitem__, k=3, clock=Clock())
        m2.after_write([(SUBJ, OBJ)])
        assert ledger(cache) == {"m2_pair.calls": 1, "m2_pair.lines_kept": 1}
    llm.settle(second_try)
    llm.settle(second_try)  # settling twice counts once
    assert ledger(cache)["m1_chunk.lines_kept"] == 2
    assert first_try.counters == {("m1_chunk", "lines_kept"): 2}  # dropped with its block, never written
    assert llm.usage.counters["m1_chunk.lines_kept"] == 4  # the session's own count is not deferred


class CountingStage(FlakyStage):
    def __init__(self):
        super().__init__()
        self.committed_outputs: list[StageOutput[None]] = []

    def committed(self, output: StageOutput[None]) -> None:
        self.committed_outputs.append(output)


class RefusingBroker(Broker):
    """The first commit is refused (a rebalance): the batch comes again."""

    def commit(self, records):
        super().commit(records)
        return len(self.committed) > 1


def test_review_finding_the_stage_counts_a_batch_only_after_its_commit_and_not_when_the_commit_is_refused():
    record = consumer_record("news.chunks", b"{}", 3)
    broker = RefusingBroker([record], [record])
    stage = CountingStage()
    runner = StageRunner(stage, broker, broker, "dlq")
    runner.step()
    assert stage.committed_outputs == []  # refused: redelivered, counted then
    runner.step()
    assert len(stage.committed_outputs) == 1 and stage.handled == 2


def test_the_extract_stage_settles_its_batch_outcomes_when_committed():
    settled = []
    fake = SimpleNamespace(llm=SimpleNamespace(settle=settled.append))
    outcomes = object()
    ExtractStage.committed(fake, StageOutput((), (), ExtractAck((), outcomes)))
    assert settled == [outcomes]
    ExtractStage.committed(SimpleNamespace(llm=None), StageOutput((), (), ExtractAck()))


def test_review_finding_the_budget_spent_with_work_left_exits_3_not_0(monkeypatch):
    """Review finding: "`--max-llm-calls` reached with lag left exits 0; make it a distinct non-zero code"."""
    import newskg.ingest.kafka.stage as stage_module
    import newskg.pipeline as pipeline
    from newskg.cli.app import EXIT_BUDGET_SPENT, app

    monkeypatch.setattr(pipeline, "build_runners", lambda *a, **k: [])

    def spent(*args, **kwargs):
        raise BudgetExceeded("LLM call budget of 2 spent")

    monkeypatch.setattr(stage_module, "run_stages", spent)
    result = CliRunner().invoke(app, ["run", "extract", "--until-idle", "--max-llm-calls", "2", "--json"])
    assert result.exit_code == EXIT_BUDGET_SPENT == 3, result.output
    assert "budget of 2 spent" in json.loads(result.stdout)["stopped"]
    monkeypatch.setattr(stage_module, "run_stages", lambda *a, **k: None)
    assert CliRunner().invoke(app, ["run", "extract", "--until-idle", "--json"]).exit_code == 0
