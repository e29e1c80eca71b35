"""A short soak (bench/soak.py, the code of `make soak`): `newskg serve --pipeline` answers concurrent clients
while synthetic articles stream through its stages, then for a load-only tail once the feeder stops, with 0 errors,
its RSS within the stated bound, its growth per article ingested within the stated figure, its RSS flat in the
load-only tail (a per-request leak shows there, data growth cannot), and its p95 steady from the first window of the
ingesting phase to its last once the machine's own slowdown in the same windows (a fixed CPU probe) is divided out.
The full run is 10 minutes ingesting and a 3-minute tail (`make soak`); this one 60 s and 30 s, 30 s windows."""

import pytest

from bench.soak import SHORT, run_soak  # its windows and bounds, and why they are wider than `make soak`'s
from tests.support.isolation import Isolated

pytestmark = pytest.mark.integration


@pytest.mark.timeout(900)
def test_api_under_load_while_the_pipeline_ingests_has_no_errors_and_bounded_rss_and_latency(
    isolated: Isolated, tmp_path
):
    report = run_soak(SHORT, isolated.settings, isolated.env, tmp_path)

    assert report["errors"] == [] and report["dead_letters"] == 0, report["errors"]
    assert report["server_exit_code"] in (0, -15), report["server_exit_code"]  # stopped by us, not crashed
    figures = report["figures"]
    assert figures["soak_requests"]["value"] > 50
    assert report["checks"] == {
        "no_errors": True,
        "rss_within_bound": True,
        "rss_per_article_within_bound": True,
        "rss_flat_in_load_only_tail": True,
        "p95_stable": True,
    }, (
        {
            name: figures[name]
            for name in (
                "soak_rss_per_article_kb",
                "soak_rss_tail_slope_mb_per_min",
                "soak_drain_s",
                "soak_p95_per_probe_last_window",
            )
        },
        report["phases_s"],
        report["rss_samples_mb"],
    )
    # the load adjustment had something to divide by: the probe ran in both windows
    assert (
        figures["soak_cpu_probe_last_window_ms"]["value"] > 0 and figures["soak_cpu_probe_last_window_ms"]["baseline"]
    )
    # the pipeline ingested meanwhile: every article published (3 warm-up + the feeder's) is in the graph
    assert figures["soak_articles_sent"]["value"] > 0
    assert report["graph"]["articles"] >= figures["soak_articles_sent"]["value"] + 3, report["graph"]
    assert report["graph"]["interactions"] > 0
