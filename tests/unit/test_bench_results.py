"""`make bench` and `make soak` plumbing: the figures read from a bench's stdout, RESULTS.md written from them, and
the soak's checks computed from what it sampled."""

import json

import pytest

from bench.figures import figure
from bench.results import BENCHES, Outcome, last_json_object, markdown
from bench.soak import SoakConfig, Tally, exit_code, report


def test_the_last_figures_object_on_stdout_is_the_result_whatever_else_was_printed():
    first = {"figures": {"a": figure(1, "x")}, "machine": "m", "date": "d", "command": "c"}
    last = {"figures": {"b": figure(2.0, "y", 4.0)}, "machine": "m", "date": "d", "command": "c"}
    stdout = "\n".join(["starting servers", json.dumps(first), "{not json", json.dumps(last), '{"other": 1}', ""])
    assert last_json_object(stdout) == last
    assert last_json_object("no figures here\n") is None


def test_results_md_lists_every_figure_with_its_baseline_and_ratio_and_says_which_bench_failed():
    graph, qa = (next(b for b in BENCHES if b.name == n) for n in ("graph", "qa"))
    result = {
        "figures": {"graph_batch_rows_per_s": figure(15000.0, "interactions/s", 750.0)},
        "machine": "Linux x86_64, 2 cores",
        "date": "2026-11-22T15:00:00+00:00",
        "command": "python -m bench.graph --json",
    }
    outcomes = [
        Outcome(graph, "python -m bench.graph --json", 12.0, (9.0, 8.0, 7.0), (10.0, 8.5, 7.1), result, None),
        Outcome(qa, "python -m bench.qa --json", 3.0, (9.0, 8.0, 7.0), (9.0, 8.0, 7.0), None, "exit 1: boom"),
    ]
    text = markdown(outcomes, full=False, started="2026-11-22T15:00:00+00:00")
    row = next(line for line in text.splitlines() if "`graph_batch_rows_per_s`" in line)
    assert [cell.strip() for cell in row.split("|")[2:6]] == ["15,000", "interactions/s", "750", "20"]
    assert "No figures: exit 1: boom." in text
    assert "9.0 / 8.0 / 7.0" in text and "10.0 / 8.5 / 7.1" in text  # the load average around each bench
    assert "python -m bench.qa --sizes 10000,20000,100000,1000000 --clients 10" in text  # the full-size flags


# A soak of 2 minutes ingesting (30 articles a minute: 3 every 6 s) and a 1-minute load-only tail; the stages
# drain 5 s after the feeder stops. RSS is sampled every 10 s (19 samples, t = 0..180 s).
CONFIG = SoakConfig(minutes=2, tail_minutes=1, window_s=60, rss_bound_mb=1000)
INGEST_S, END_S = 120, 180


def _tally(
    first_ms: float,
    last_ms: float,
    rss: list[float],
    probe_first: float = 10,
    probe_last: float = 10,
    drained_at: float | None = INGEST_S + 5,
) -> Tally:
    """`first_ms` latencies in the first minute, `last_ms` after; `rss` one sample every 10 s."""
    tally = Tally()
    tally.latencies = [(t / 10, first_ms if t < 600 else last_ms) for t in range(END_S * 10)]  # 10 a second
    tally.rss = [(10.0 * i, mb) for i, mb in enumerate(rss)]
    tally.probes = [(float(t), probe_first if t < 60 else probe_last) for t in range(0, END_S, 2)]  # every 2 s
    tally.sent = [(6.0 * k, 3 * (k + 1)) for k in range(INGEST_S // 6)]
    tally.articles_sent = 3 * (INGEST_S // 6)
    tally.drained_at = drained_at
    return tally


def _rss(ingest_mb_per_sample: float, tail_mb_per_sample: float, start: float = 700) -> list[float]:
    """19 samples: a steady rise while ingesting (t ≤ 120 s), then another in the tail."""
    ingest = [start + ingest_mb_per_sample * i for i in range(INGEST_S // 10 + 1)]
    return ingest + [ingest[-1] + tail_mb_per_sample * i for i in range(1, (END_S - INGEST_S) // 10 + 1)]


def test_the_soak_passes_steady_latency_and_memory_and_flags_a_slowdown_and_an_error():
    steady = report(CONFIG, _tally(100, 150, _rss(0, 0)), 0, {}, 0)
    assert steady["passed"] and steady["figures"]["soak_p95_last_window_ms"]["ratio"] == 1.5

    slower = report(CONFIG, _tally(100, 250, _rss(0, 0)), 0, {}, 0)
    assert slower["checks"]["p95_stable"] is False

    over = report(CONFIG, _tally(100, 100, _rss(0, 0, start=1001)), 0, {}, 0)
    assert over["checks"]["rss_within_bound"] is False

    failed = _tally(100, 100, _rss(0, 0))
    failed.error("/v1/ask 500: boom")
    assert report(CONFIG, failed, 0, {}, 0)["checks"]["no_errors"] is False


def test_the_soaks_p95_check_allows_the_machines_own_slowdown_and_flags_the_servers():
    machine_slower = report(CONFIG, _tally(100, 300, _rss(0, 0), probe_first=10, probe_last=30), 0, {}, 0)
    assert machine_slower["checks"]["p95_stable"] is True, machine_slower["figures"]
    assert machine_slower["figures"]["soak_cpu_probe_last_window_ms"]["ratio"] == 3.0
    assert machine_slower["figures"]["soak_p95_per_probe_last_window"]["ratio"] == 1.0

    server_slower = report(CONFIG, _tally(100, 300, _rss(0, 0), probe_first=10, probe_last=12), 0, {}, 0)
    assert server_slower["checks"]["p95_stable"] is False, server_slower["figures"]


def test_the_soak_compares_p95_within_the_ingesting_phase_not_against_the_idle_stages_of_the_tail():
    tally = _tally(100, 100, _rss(0, 0))
    tally.latencies = [(t / 10, 300 if 60 <= t / 10 < INGEST_S else 100) for t in range(END_S * 10)]
    slower_while_ingesting = report(CONFIG, tally, 0, {}, 0)
    assert slower_while_ingesting["checks"]["p95_stable"] is False  # the fast tail does not hide it
    assert slower_while_ingesting["figures"]["soak_p95_tail_ms"]["value"] == 100
    # and which kind of request it was: p95 in the first window, the last window of ingesting, the tail
    tally.by_kind = {"ask hybrid": tally.latencies, "/healthz": [(t, 5.0) for t, _ in tally.latencies]}
    assert report(CONFIG, tally, 0, {}, 0)["p95_by_kind_ms"] == {"/healthz": [5, 5, 5], "ask hybrid": [100, 300, 100]}


def test_the_soaks_rss_checks_pass_growth_with_the_data_ingested_and_flag_a_leak_in_the_load_only_tail():
    # 1.5 MB a sample while 5 articles arrive (300 KB an article, 9 MB/min), level once the feeder stops: data
    # growth. The old check (second half's slope at most half the first's, or 5 MB/min) failed it: it never levels
    # off while ingesting.
    data = report(CONFIG, _tally(100, 100, _rss(1.5, 0)), 0, {}, 0)
    assert data["checks"]["rss_per_article_within_bound"] and data["checks"]["rss_flat_in_load_only_tail"], data
    assert data["passed"]
    # 1.5 MB per 5 articles is 307 KB; the 6-s feeder ticks fall unevenly between the 10-s samples
    assert data["figures"]["soak_rss_per_article_kb"]["value"] == pytest.approx(307.2, rel=0.1)
    assert data["figures"]["soak_rss_tail_slope_mb_per_min"]["value"] == 0.0

    # the same data growth, and RSS still rising as fast after the stages drained: the requests leak
    leak = report(CONFIG, _tally(100, 100, _rss(1.5, 1.5)), 0, {}, 0)
    assert leak["checks"]["rss_per_article_within_bound"] is True  # while ingesting it looks like data...
    assert leak["checks"]["rss_flat_in_load_only_tail"] is False  # ...the load-only tail shows it
    assert leak["figures"]["soak_rss_tail_slope_mb_per_min"]["value"] == 9.0

    # a fast steady leak fails both: far more than an article's data while ingesting, and in the tail
    fast = report(CONFIG, _tally(100, 100, _rss(20, 20), drained_at=INGEST_S), 0, {}, 0)
    assert not fast["checks"]["rss_per_article_within_bound"] and not fast["checks"]["rss_flat_in_load_only_tail"]

    # growth per article beyond the bound (2 MB an article) fails even when the tail is flat
    heavy = report(CONFIG, _tally(100, 100, _rss(10, 0)), 0, {}, 0)
    assert heavy["checks"]["rss_per_article_within_bound"] is False and heavy["checks"]["rss_flat_in_load_only_tail"]


def test_the_soaks_leak_check_fails_when_the_stages_never_drained_or_left_too_little_tail_to_read():
    never = report(CONFIG, _tally(100, 100, _rss(0, 0), drained_at=None), 0, {}, 0)
    assert never["checks"]["rss_flat_in_load_only_tail"] is False
    late = report(CONFIG, _tally(100, 100, _rss(0, 0), drained_at=INGEST_S + 40), 0, {}, 0)  # 20 s of a 60 s tail
    assert late["checks"]["rss_flat_in_load_only_tail"] is False
    assert late["figures"]["soak_drain_s"]["value"] == 40


def test_the_soak_exits_1_on_a_broken_bound_except_with_json_where_the_failed_check_is_a_figure():
    slower = report(CONFIG, _tally(100, 250, _rss(0, 0)), 0, {}, 0)
    assert (exit_code(slower, as_json=False), exit_code(slower, as_json=True)) == (1, 0)
    assert slower["figures"]["soak_checks_passed"]["value"] == 4
    steady = report(CONFIG, _tally(100, 100, _rss(0, 0)), 0, {}, 0)
    assert exit_code(steady, as_json=False) == 0


def test_the_soaks_flags_start_from_the_full_or_the_short_run_and_override_its_fields():
    from bench.soak import SHORT, parse

    assert parse([])[0] == SoakConfig()
    assert parse(["--short"])[0] == SHORT
    config, args = parse(["--short", "--tail-minutes", "0", "--pace", "1", "--json"])
    assert (config.tail_minutes, config.pace_s, config.minutes, config.window_s, args.json) == (0, 1, 1.0, 30, True)
    # the full run reads a store pre-filled with its own feed (300 articles); the short one keeps `make test` at 90 s
    assert (SoakConfig().prefill, SHORT.prefill, parse(["--prefill", "150"])[0].prefill) == (300, 0, 150)


def test_the_soak_reports_its_pre_fill_articles_and_seconds():
    tally = _tally(100, 100, _rss(0, 0))
    tally.prefilled, tally.prefill_s = 300, 95.04
    figures = report(CONFIG, tally, 0, {}, 0)["figures"]
    assert (figures["soak_prefill_articles"]["value"], figures["soak_prefill_s"]["value"]) == (300, 95.0)


def test_make_bench_leaves_the_optional_fresh_clone_demo_out_unless_it_is_named():
    from bench.results import chosen

    everyday = [b.name for b in chosen(None)]
    assert "demo" not in everyday and "graph" in everyday
    assert [b.name for b in chosen(["demo"])] == ["demo"]
    assert [b.name for b in chosen(["qa", "demo", "graph"])] == ["graph", "qa", "demo"]  # BENCHES order


def test_an_unknown_bench_name_stops_the_run_instead_of_running_nothing():
    from bench.results import chosen

    with pytest.raises(SystemExit, match="unknown bench: demos"):
        chosen(["demos"])


def test_the_demo_bench_reads_the_setup_and_demo_step_times_from_the_output():
    from bench.demo import TIMED, Run, figures_of

    lines = ["[time] setup project [eval,local]: 61 s", "[time] demo 2 process and extract: 40 s", "== 2. Process"]
    parts = {m["name"]: float(m["seconds"]) for line in lines if (m := TIMED.match(line))}
    figures = figures_of(Run(seconds=200.0, returncode=0, demo_started_s=90.0, cpu_s=150.0, parts=parts), 3.5, 4.0)
    assert figures["demo_fresh_clone_s"]["value"] == 200.0 and figures["demo_fresh_clone_cpu_s"]["value"] == 150.0
    assert figures["setup_s"]["value"] == 90.0 and figures["demo_script_s"]["value"] == 110.0
    assert figures["step_setup_project_eval_local_s"]["value"] == 61.0
    assert figures["step_demo_2_process_and_extract_s"]["value"] == 40.0
    assert figures["load_1m_before"]["value"] == 3.5


def test_a_run_of_some_benches_keeps_the_other_benches_outcomes_from_the_last_run(tmp_path):
    """`--only qa_1m` adds the 1 M step to the file `make bench` wrote instead of replacing it (bench/RESULTS.json
    keeps every outcome)."""
    import json

    from bench.results import kept_outcomes, merged, record

    by_name = {b.name: b for b in BENCHES}
    old = [
        Outcome(by_name[n], f"python -m bench.{n}", 1.0, (1.0, 1.0, 1.0), (2.0, 2.0, 2.0), {"figures": {}}, None)
        for n in ("broker", "qa")
    ]
    saved = tmp_path / "RESULTS.json"
    saved.write_text(json.dumps({o.bench.name: record(o) for o in old}))
    new = Outcome(by_name["qa_1m"], "python -m bench.qa", 9.0, (0, 0, 0), (0, 0, 0), None, "x")
    outcomes = merged([new], kept_outcomes(saved))
    assert [o.bench.name for o in outcomes] == ["broker", "qa", "qa_1m"]
    assert outcomes[:2] == old and outcomes[2] is new
    assert by_name["qa_1m"].script == "qa" and by_name["qa_1m"].optional
    assert kept_outcomes(tmp_path / "missing.json") == {}
