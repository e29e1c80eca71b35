"""`make bench` and `make soak` plumbing: the figures read from a bench's stdout, RESULTS.md written from them, and
the soak's checks computed from what it sampled."""

import json

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
    assert "python -m bench.qa --rows 1000000 --clients 50 --seconds 60" in text  # the full-size flags


def _tally(first_ms: float, last_ms: float, rss: list[float], probe_first: float = 10, probe_last: float = 10) -> Tally:
    tally = Tally()
    tally.latencies = [(t / 10, first_ms if t < 600 else last_ms) for t in range(1200)]  # 120 s, 10 a second
    tally.rss = [(10.0 * i, mb) for i, mb in enumerate(rss)]
    tally.probes = [(float(t), probe_first if t < 60 else probe_last) for t in range(0, 120, 2)]  # every 2 s
    return tally


def test_the_soak_passes_steady_latency_and_memory_and_flags_a_slowdown_a_leak_and_an_error():
    config = SoakConfig(minutes=2, window_s=60, rss_bound_mb=1000)
    steady = report(config, _tally(100, 150, [700] * 13), 0, {}, 0)
    assert steady["passed"] and steady["figures"]["soak_p95_last_window_ms"]["ratio"] == 1.5

    slower = report(config, _tally(100, 250, [700] * 13), 0, {}, 0)
    assert slower["checks"]["p95_stable"] is False

    leaking = report(
        config, _tally(100, 100, [700, 710, 720, 730, 740, 750, 800, 850, 900, 950, 990, 995, 999]), 0, {}, 0
    )
    assert leaking["checks"]["rss_growth_within_bound"] is False and leaking["checks"]["rss_within_bound"] is True

    failed = _tally(100, 100, [700] * 13)
    failed.error("/v1/ask 500: boom")
    assert report(config, failed, 0, {}, 0)["checks"]["no_errors"] is False


def test_the_soaks_p95_check_allows_the_machines_own_slowdown_and_flags_the_servers():
    config = SoakConfig(minutes=2, window_s=60, rss_bound_mb=1000)
    machine_slower = report(config, _tally(100, 300, [700] * 13, probe_first=10, probe_last=30), 0, {}, 0)
    assert machine_slower["checks"]["p95_stable"] is True, machine_slower["figures"]
    assert machine_slower["figures"]["soak_cpu_probe_last_window_ms"]["ratio"] == 3.0
    assert machine_slower["figures"]["soak_p95_per_probe_last_window"]["ratio"] == 1.0

    server_slower = report(config, _tally(100, 300, [700] * 13, probe_first=10, probe_last=12), 0, {}, 0)
    assert server_slower["checks"]["p95_stable"] is False, server_slower["figures"]


def test_the_soaks_rss_check_tells_a_steady_leak_from_growth_that_levels_off():
    config = SoakConfig(minutes=2, window_s=60, rss_bound_mb=2000, rss_growth_bound=2.0)
    # 20 MB a sample (120 MB/min) from start to end: a leak, though within the total bounds
    leak = report(config, _tally(100, 100, [700 + 20.0 * i for i in range(13)]), 0, {}, 0)
    assert leak["checks"]["rss_levels_off"] is False and leak["checks"]["rss_growth_within_bound"] is True
    assert leak["figures"]["soak_rss_slope_second_half_mb_per_min"]["value"] == 120.0
    # the same growth in the first half, then flat: warm-up
    levels_off = report(config, _tally(100, 100, [700 + 20.0 * min(i, 6) for i in range(13)]), 0, {}, 0)
    assert levels_off["checks"]["rss_levels_off"] is True, levels_off["figures"]
    assert levels_off["passed"]


def test_the_soak_exits_1_on_a_broken_bound_except_with_json_where_the_failed_check_is_a_figure():
    config = SoakConfig(minutes=2, window_s=60, rss_bound_mb=1000)
    slower = report(config, _tally(100, 250, [700] * 13), 0, {}, 0)
    assert (exit_code(slower, as_json=False), exit_code(slower, as_json=True)) == (1, 0)
    assert slower["figures"]["soak_checks_passed"]["value"] == 4
    steady = report(config, _tally(100, 100, [700] * 13), 0, {}, 0)
    assert exit_code(steady, as_json=False) == 0


def test_make_bench_leaves_the_optional_fresh_clone_demo_out_unless_it_is_named():
    from bench.results import chosen

    everyday = [b.name for b in chosen(None)]
    assert "demo" not in everyday and "graph" in everyday
    assert [b.name for b in chosen(["demo"])] == ["demo"]
    assert [b.name for b in chosen(["qa", "demo", "graph"])] == ["graph", "qa", "demo"]  # BENCHES order


def test_an_unknown_bench_name_stops_the_run_instead_of_running_nothing():
    import pytest

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
