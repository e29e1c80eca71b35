"""NEON spike days and replay, offline: the spike rule exactly (ties at the threshold included), the streaming
log reader (CSV and JSONL, malformed lines, the privacy rule), the synthetic query log's known spikes found by the
detector, the method seam's variant filter, the report's aggregates, and the CLI's errors on a bad log."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from newskg.evaluation.neon.linking import LinkedEntity, ResolverLinker, link_log, log_spikes
from newskg.evaluation.neon.logs import QueryLogError, _add_user, normalise, parse_day, read_log
from newskg.evaluation.neon.methods import METHODS, retrieve
from newskg.evaluation.neon.querylog import generate_log, spikes_path
from newskg.evaluation.neon.report import Grid, aggregate, bootstrap_ci, table_k, write_report
from newskg.evaluation.neon.scoring import PROXY_ATTRIBUTES, ProxyScorer, Scored
from newskg.evaluation.neon.spikes import SpikeRule, detect, rolling_sums
from newskg.evaluation.neoqa.generate import generate
from newskg.graph.store.asof import AsOf
from newskg.qa.evidence import Evidence
from newskg.qa.query import EntityChoice, Resolution

DAY0 = 20240101


def days(n: int) -> list[int]:
    return [DAY0 + i for i in range(n)]  # January: day keys are consecutive integers


def series(values: list[int]) -> dict[int, int]:
    return dict(zip(days(len(values)), values, strict=True))


# --- the spike rule


def test_rolling_sum_is_trailing_and_undefined_until_the_window_fits():
    assert rolling_sums([1, 2, 3, 4, 5], 3) == [None, None, 6, 9, 12]
    assert rolling_sums([4, 0], 1) == [4, 0]


def test_one_burst_flags_exactly_the_days_whose_window_holds_it():
    counts = [1] * 20
    counts[10] = 30
    found = detect(series(counts), DAY0, DAY0 + 19, SpikeRule())
    # sums: 3 everywhere except days 10, 11, 12 (32); 18 sums: mean 14/3 + 1σ ≈ 11.95 < 32, and 3 stays below
    assert found.spikes == [DAY0 + 10, DAY0 + 11, DAY0 + 12]
    sums = [3] * 18
    sums[8:11] = [32, 32, 32]
    assert found.threshold == pytest.approx(np.mean(sums) + np.std(sums, ddof=1))


def test_a_rolling_sum_equal_to_the_threshold_is_not_a_spike():
    """Sums 0, 1, 1, 1, 4, 5: mean 2, sample σ 2, threshold exactly 4. "Exceeds" is strict: 4 is not a spike,
    5 is; decided in exact arithmetic, not by float luck."""
    found = detect(series([0, 0, 0, 1, 0, 0, 4, 1]), DAY0, DAY0 + 7, SpikeRule(window=3, sigma=1.0))
    assert found.rolling == [None, None, 0, 1, 1, 1, 4, 5]
    assert found.threshold == 4.0
    assert found.spikes == [DAY0 + 7]


def test_missing_days_count_zero_and_a_flat_series_has_no_spike():
    sparse = detect({DAY0 + 5: 9}, DAY0, DAY0 + 9, SpikeRule(window=1, sigma=1.0))
    assert sparse.counts == [0, 0, 0, 0, 0, 9, 0, 0, 0, 0] and sparse.spikes == [DAY0 + 5]
    assert detect(series([2] * 10), DAY0, DAY0 + 9, SpikeRule()).spikes == []
    assert detect(series([5, 0, 9]), DAY0, DAY0 + 2, SpikeRule(window=3)).threshold is None  # one sum only


def test_window_and_sigma_are_configurable():
    values = [0, 1, 2, 3, 4, 5]
    assert detect(series(values), DAY0, DAY0 + 5, SpikeRule(window=1, sigma=0.0)).spikes == days(6)[3:]  # > mean 2.5
    assert detect(series(values), DAY0, DAY0 + 5, SpikeRule(window=1, sigma=1.0)).spikes == [DAY0 + 5]
    with pytest.raises(ValueError):
        SpikeRule(window=0)


# --- reading logs


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_log_counts_malformed_lines_and_keeps_reading(tmp_path):
    log = write(
        tmp_path / "log.jsonl",
        [
            '{"timestamp": "2024-01-02T10:00:00Z", "query": "Doja Cat", "count": 3}',
            "{not json",
            '{"timestamp": "2024-01-02", "query": "  "}',
            '{"timestamp": "yesterday-ish?", "query": "doja cat"}',
            '{"timestamp": "2024-01-02", "query": "doja cat", "count": 0}',
            "[1, 2]",
            "",
            '{"timestamp": 1704240000, "query": "DOJA   cat"}',
            '{"timestamp": "2024-01-02", "query": "doja cat", "count": 2.5}',  # int() made it 2
            '{"timestamp": "2024-01-02", "query": "doja cat", "count": true}',  # int() made it 1
            '{"timestamp": "2024-01-02", "query": "doja cat", "count": " 2 "}',  # digits as text: 2
        ],
    )
    read = read_log(log)
    assert read.rows == 3 and read.malformed == 7
    assert [m.line for m in read.malformed_samples] == [2, 3, 4, 5, 6, 9, 10]
    assert read.daily == {("doja cat", 20240102): 5, ("doja cat", 20240103): 1}  # epoch 1704240000 = Jan 3 UTC
    assert not read.has_users and read.summary()["privacy_applied"] is False


def test_csv_log_with_users_and_counts_and_a_short_row(tmp_path):
    log = write(
        tmp_path / "log.csv",
        [
            "timestamp,query,user_id,count",
            "2024-01-02T23:30:00-02:00,tour dates,u1,2",  # 01:30 UTC on Jan 3
            "2024-01-03,tour dates,u2,",
            "2024-01-03,only two fields",
            '2024-01-03,"tour, dates",u3,1',
        ],
    )
    read = read_log(log, min_users=1)
    assert read.malformed == 1 and read.malformed_samples[0].line == 4
    assert read.daily == {("tour dates", 20240103): 3, ("tour, dates", 20240103): 1}
    assert read.has_users and read.dropped_queries == 0


def test_csv_without_the_required_columns_or_rows_is_an_error(tmp_path):
    with pytest.raises(QueryLogError, match="timestamp and query"):
        read_log(write(tmp_path / "a.csv", ["when,what", "2024-01-01,x"]))
    with pytest.raises(QueryLogError, match="no readable rows"):
        read_log(write(tmp_path / "b.jsonl", ["{broken", "{}"]))
    with pytest.raises(QueryLogError, match="does not exist"):
        read_log(tmp_path / "missing.jsonl")


def test_timestamps_become_utc_days():
    assert parse_day("2024-01-02T23:30:00-02:00") == 20240103
    assert parse_day("2024-01-02") == 20240102
    assert parse_day(1704240000) == parse_day("1704240000000") == 20240103  # seconds and milliseconds
    assert parse_day("Jan 5 2024") == 20240105
    assert normalise("  Doja\u00a0CAT  ") == "doja cat"


def test_privacy_rule_drops_queries_of_fewer_than_five_distinct_users(tmp_path):
    rows = [{"timestamp": "2024-01-02", "query": "popular", "user_id": f"u{i}"} for i in range(5)]
    rows += [{"timestamp": "2024-01-02", "query": "Popular ", "user_id": "u0", "count": 7}]  # same user again
    rows += [{"timestamp": "2024-01-03", "query": "rare", "user_id": f"u{i % 4}", "count": 2} for i in range(40)]
    rows += [{"timestamp": "2024-01-03", "query": "anonymous"}]  # no user id: counts for nobody
    log = write(tmp_path / "log.jsonl", [json.dumps(r) for r in rows])
    read = read_log(log, min_users=5)
    assert read.daily == {("popular", 20240102): 12}
    assert read.dropped_queries == 2 and read.dropped_issues == 81 and read.kept_queries == 1
    assert read.summary()["privacy_applied"] and read.summary()["dropped_queries"] == 2


def test_user_memory_per_query_stops_at_the_threshold():
    users: dict = {}
    for i in range(4):
        _add_user(users, "q", f"u{i}", 5)
    assert users["q"] == {"u0", "u1", "u2", "u3"}
    for i in range(4, 1000):
        _add_user(users, "q", f"u{i}", 5)
    assert users["q"] is None  # passed: no ids kept at all


# --- the synthetic query log


class NameLinker:
    """Links a query to the known entity whose name starts it (the longest first)."""

    def __init__(self, names):
        self.names = sorted(names, key=len, reverse=True)

    def link(self, query, day):
        return next((LinkedEntity(n, n) for n in self.names if query.startswith(n)), None)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_generated_logs_spikes_are_exactly_the_known_ones(tmp_path, seed):
    data = generate(2, seed=seed, events=10)
    out = tmp_path / "log.jsonl"
    known = generate_log(data.timelines, out, seed=seed)
    assert json.loads(spikes_path(out).read_text()) == known
    read = read_log(out, min_users=5)
    assert read.dropped_queries == known["dropped_queries"] > 0
    linked = link_log(read, NameLinker([e["entity"] for e in known["entities"]]))
    found = {s.entity_id: s.spikes for s in log_spikes(linked, SpikeRule())}
    assert linked.unlinked_queries == 0
    assert {e["entity"]: e["spike_days"] for e in known["entities"]} == found
    assert all(set(e["event_days"]) <= set(e["spike_days"]) for e in known["entities"])


def test_generated_log_is_deterministic_and_csv_reads_the_same(tmp_path):
    data = generate(1, seed=4, events=6)
    generate_log(data.timelines, tmp_path / "a.jsonl", seed=9)
    generate_log(data.timelines, tmp_path / "b.jsonl", seed=9)
    generate_log(data.timelines, tmp_path / "c.csv", seed=9)
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
    assert read_log(tmp_path / "a.jsonl").daily == read_log(tmp_path / "c.csv").daily


# --- the method seam


def evidence(i: str, day: int = DAY0) -> Evidence:
    return Evidence(i, "interaction", f"line {i}", day, day)


def test_each_neon_method_is_the_retrievers_own_method_and_variant():
    """The replay names the retriever's methods, never its own copy of them: NewsRAG reads chunks with k 5,
    NEON(Mx) variant Mx's interactions with k 10 (the filter itself: integration/test_retrieval.py)."""
    assert {name: (m.kind, m.variant, m.default_k) for name, m in METHODS.items()} == {
        "newsrag": ("chunk", None, 5),
        "m0": ("interaction", "M0", 10),
        "m1": ("interaction", "M1", 10),
        "m2": ("interaction", "M2", 10),
    }


def test_an_unknown_strategy_is_refused_before_any_read():
    with pytest.raises(ValueError, match="strategy"):
        retrieve(None, METHODS["m0"], "hybrid", "e1", "q", AsOf(DAY0), 2)  # pyright: ignore[reportArgumentType]  # never reached


# --- report


def test_bootstrap_is_seeded_and_brackets_the_mean():
    values = [0, 1, 2, 2, 1, 0, 2, 2]
    first, second = bootstrap_ci(values), bootstrap_ci(values)
    assert first == second and first["ci_low"] <= first["mean"] == 1.25 <= first["ci_high"]
    assert bootstrap_ci([1.0]) == {"n": 1, "mean": 1.0, "ci_low": 1.0, "ci_high": 1.0}
    assert bootstrap_ci([])["mean"] is None


def test_table_uses_each_methods_own_k_or_the_nearest_below():
    assert table_k("newsrag", [1, 3, 5, 10, 20]) == 5 and table_k("m1", [1, 3, 5, 10, 20]) == 10
    assert table_k("m0", [1, 3, 7]) == 7 and table_k("newsrag", [8, 20]) == 8


def record(method, strategy, k, score, chars, with_evidence=True):
    attrs = {a: {"score": score, "rationale": "r"} for a in PROXY_ATTRIBUTES}
    return {
        "query": f"q{method}{strategy}{k}{score}",
        "day": "2024-01-01",
        "method": method,
        "strategy": strategy,
        "k": k,
        "evidence": [evidence("x").as_dict()] if with_evidence else [],
        "response_chars": chars,
        "judgements": {"proxies": {"attributes": attrs, "raw": {}}},
    }


def test_aggregate_tables_curves_lengths_and_empty_counts(tmp_path):
    records = [record("newsrag", "temporal", k, s, 100 * k) for k in (5, 10) for s in (0.0, 1.0)]
    records += [record("m0", "temporal", k, 0.5, 50, with_evidence=False) for k in (5, 10)]
    scorer = ProxyScorer()
    summary = aggregate(records, [scorer], Grid(["newsrag", "m0"], ["temporal"], [5, 10]))
    rows = {r["method"]: r for r in summary["tables"]["proxies"]["rows"]}
    assert rows["newsrag"]["k"] == 5 and rows["newsrag"]["attributes"]["proxy_date_precision"]["mean"] == 0.5
    assert rows["m0"]["k"] == 10 and rows["m0"]["average"] == 0.5
    lengths = {r["method"]: r for r in summary["lengths"]}
    assert (
        lengths["newsrag"]["mean"] == 500 and lengths["newsrag"]["by_level"]["proxies:proxy_date_precision:2"]["n"] == 1
    )
    assert {r["method"]: r["no_evidence"] for r in summary["no_evidence"]} == {"newsrag": 0, "m0": 1}
    spikes = [detect(series([1] * 5 + [9] + [1] * 6), DAY0, DAY0 + 11, SpikeRule(), "e1", "Doja Cat")]
    meta = {
        "origin": "query log",
        "rule": {"window": 3, "sigma": 1.0},
        "log": None,
        "queries": 3,
        "spike_days": 1,
        "methods": ["newsrag", "m0"],
        "strategies": ["temporal"],
        "ks": [5, 10],
        "runs": len(records),
        "answerer": "extractive (offline)",
        "scores": "proxies",
    }
    _, paths = write_report(tmp_path, records, [scorer], spikes, meta, Grid(["newsrag", "m0"], ["temporal"], [5, 10]))
    report = json.loads(paths["json"].read_text())
    assert len(report["runs"]) == len(records) and report["spikes"][0]["spike_days"] == [DAY0 + 5, DAY0 + 6, DAY0 + 7]
    page = paths["html"].read_text()
    assert "PROXIES" in page and "data:image/png;base64" in page
    assert paths["topk-proxies"].stat().st_size > 0 and list(tmp_path.glob("spikes-doja-cat-*.png"))


def test_proxy_scores_are_named_as_proxies():
    scored = ProxyScorer().score("q", DAY0, "line x", [evidence("x")], "Doja Cat")
    assert isinstance(scored, Scored) and set(scored.attributes) == set(PROXY_ATTRIBUTES)
    assert all(name.startswith("proxy_") for name in scored.attributes)
    assert scored.attributes["proxy_date_precision"]["score"] == 1.0


# --- CLI errors on a bad log (they come before any server is needed)


def cli(*args: str):
    """The real command in-process (a subprocess per call costs seconds of imports on a busy machine)."""
    from typer.testing import CliRunner

    from newskg.cli.app import app

    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stderr + result.output


@pytest.mark.parametrize("command", ["spikes", "replay"])
def test_cli_fails_clearly_on_a_missing_or_empty_log(tmp_path, command):
    extra = ["--out", str(tmp_path / "out")] if command == "replay" else []
    code, said = cli("eval", command, "--log", str(tmp_path / "none.jsonl"), *extra)
    assert code != 0 and "does not exist" in said
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    code, said = cli("eval", command, "--log", str(empty), *extra)
    assert code != 0 and "is empty" in said
    code, said = cli("eval", command, *extra)
    assert code != 0 and "exactly one of --log FILE or --from-graph" in said


# --- linking a log query: stricter than answering one


class ScriptedResolver:
    """The resolver's answer for each mention, as EntityResolver.resolve returns it (best, close runners-up)."""

    def __init__(self, answers: dict[str, Resolution]):
        self.answers = answers
        self.asked: list[tuple[str, int]] = []

    def resolve(self, mention: str, as_of: AsOf | int | str | None = None) -> Resolution:
        self.asked.append((mention, AsOf.of(as_of).day))
        return self.answers.get(mention, (None, []))


def choice(name: str, score: float) -> EntityChoice:
    return EntityChoice(f"id-{name}", name, "ORG", score, 0)


def test_a_log_query_does_not_link_to_a_merely_similar_name():
    """A name that does not exist yet ("ormian holdings") must not be counted for a similar known entity: the
    answering resolver's fuzzy match (score 77, accepted from 75) is below the log's bar, so no spike is invented."""
    resolver = ScriptedResolver(
        {
            "ormian holdings": (choice("Varnaan Holdings", 77.4), []),
            "taylor swfit": (choice("Taylor Swift", 91.7), []),
            "doja": (choice("Doja Cat", 85.0), []),
            "varnaan": (choice("Varnaan Group", 80.0), [choice("Varnaan Holdings", 85.0)]),
        }
    )
    linker = ResolverLinker(resolver)
    assert linker.link("ormian holdings", DAY0) is None
    assert linker.link("taylor swfit news", DAY0) == LinkedEntity("id-Taylor Swift", "Taylor Swift")
    assert linker.link("doja", DAY0) == LinkedEntity("id-Doja Cat", "Doja Cat")
    assert linker.link("varnaan", DAY0) == LinkedEntity("id-Varnaan Holdings", "Varnaan Holdings")
    assert ("ormian holdings", DAY0) in resolver.asked
    assert ResolverLinker(resolver, min_score=75.0).link("ormian holdings", DAY0) == LinkedEntity(
        "id-Varnaan Holdings", "Varnaan Holdings"
    )
