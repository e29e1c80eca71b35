"""bench/qa.py at several sizes in one run: figure names per size, the growth from the smallest to the largest, and
the open loop's latency counted from the scheduled send (so queueing counts), with the server's own time beside it
(its Server-Timing header), against a local server."""

from __future__ import annotations

import asyncio
import random

from bench import qa


def _summary(p95: float, rps: float = 100.0) -> dict[str, float]:
    server = {"server_p50": p95 / 4, "server_p95": p95 / 2}
    cpu = {"cpu_ms": 3.0, "graph_cpu_ms": 1.0, "driver_cpu_ms": 0.2}
    return {"p50": p95 / 2, "p95": p95, "p99": p95 * 2, "rps": rps, "errors": 0, "requests": 10} | cpu | server


def _run(rows: int, half_p95: float) -> qa.SizeRun:
    graph = qa.Measured(
        loaded={"temporal": _summary(50, 200), "hybrid": _summary(60, 150)},
        single={"temporal": _summary(10), "hybrid": _summary(12)},
        half={s: _summary(half_p95) | {"offered": 50.0} for s in ("temporal", "hybrid")},
        explore={e: _summary(8) for e in ("search", "neighbourhood", "timeline")},
        distinct={"temporal": 0.4, "hybrid": 0.1},
        ready_s=2.5,
        api_mb=400,
    )
    scan = qa.Measured(loaded={"temporal": _summary(90, 40)})
    return qa.SizeRun(rows, 4, 1.0, 2.0, graph, scan, 90)


def test_a_size_names_its_figures():
    assert [qa.size_label(n) for n in (10_000, 100_000, 1_000_000, 2_500, 800)] == ["10k", "100k", "1m", "2_5k", "800"]


def test_the_largest_size_keeps_the_plain_names_and_every_size_has_its_suffix_and_rows(monkeypatch):
    monkeypatch.setattr(qa, "usable_cores", lambda: 2)
    found = qa.figures([_run(10_000, 10), _run(1_000_000, 14)])
    assert found["qa_p95_ms_temporal"]["rows"] == 1_000_000 and found["qa_p95_ms_temporal"]["value"] == 50
    for name in (
        "qa_p95_ms",
        "qa_errors",
        "qa_ready_s",
        "qa_api_peak_rss_mb",
        "qa_capacity_vs_scan",
        "qa_p95_ms_half_load_hybrid",
        "qa_p95_ms_half_load_server_temporal",
        "qa_explore_p95_ms_timeline",
        "qa_distinct_questions_share_temporal",
        "qa_cpu_ms_per_answer_temporal",
        "qa_p95_ms_single_client_hybrid",
    ):
        assert found[name]["rows"] == 1_000_000, name
        assert found[f"{name}_10k"]["rows"] == 10_000, name
        assert f"{name}_1m" in found, name
    assert found["qa_p95_ms_half_load_server_temporal_10k"]["value"] == 5  # the server's share, beside the client's
    assert found["qa_capacity_vs_scan"]["value"] == 5.0  # 200 answers/s over the scan's 40
    # were FalkorDB free: 2 cores on the API's 3.0 ms and the driver's 0.2 ms an answer (625/s) over the scan's 40/s
    assert found["qa_capacity_bound_vs_scan"]["value"] == 15.62
    assert found["qa_p95_growth_temporal"]["value"] == 1.4 and found["qa_p95_growth_hybrid"]["rows"] == 1_000_000


def test_no_bound_without_the_cpu_it_rests_on():
    run = _run(10_000, 10)
    unmeasured = qa.SizeRun(10_000, 4, 1.0, 2.0, run.graph, run.scan, 90)
    unmeasured.graph.loaded["temporal"] |= {"cpu_ms": 0.0, "driver_cpu_ms": 0.0}  # a run shorter than /proc's tick
    assert "qa_capacity_bound_vs_scan" not in qa.bound_figures(unmeasured)
    del unmeasured.graph.loaded["temporal"]["driver_cpu_ms"]
    assert "qa_capacity_bound_vs_scan" not in qa.bound_figures(unmeasured)


def test_one_size_has_no_growth():
    found = qa.figures([_run(20_000, 10)])
    assert "qa_p95_growth_temporal" not in found and found["qa_p95_ms_20k"]["value"] == found["qa_p95_ms"]["value"]


def test_the_open_loop_keeps_its_schedule_and_counts_the_wait_behind_a_slow_server():
    """A server that answers one request at a time in 50 ms, offered 40 requests/s for 0.5 s (twice what it
    serves): every request is sent, and the later ones wait behind the earlier ones, which their latency shows."""

    async def scenario() -> tuple[qa.Tally, float]:
        lock = asyncio.Lock()

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            while await reader.readuntil(b"\r\n\r\n"):
                async with lock:
                    await asyncio.sleep(0.05)
                writer.write(b"HTTP/1.1 200 OK\r\nServer-Timing: app;dur=50.00\r\ncontent-length: 2\r\n\r\n{}")
                await writer.drain()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]

        def make(rng: random.Random) -> qa.Request:
            return "/x", {"q": "a"}, str(rng.random())

        try:
            return await qa.open_loop(f"http://127.0.0.1:{port}", make, 40, 0.5)
        finally:
            server.close()

    tally, elapsed = asyncio.run(scenario())
    assert len(tally.latencies) == 20 and tally.errors == 0
    assert tally.server == [50.0] * 20  # the server's own time, read from its Server-Timing header
    assert max(tally.latencies) > 400  # the 20th waited behind 19 answers of 50 ms, sent 475 ms after the first
    assert elapsed > 0.9
