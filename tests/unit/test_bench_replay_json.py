"""bench/replay.py --json: one JSON object of named figures, NEON(M0) against the chunk baseline of the same run:
recall on the dev and the held-out questions apart, queries/s with the mean evidence behind them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.figures import emit
from bench.replay import heldout_sets, named_figures


def test_replay_figures_compare_each_m0_strategy_with_the_chunk_baseline_of_the_same_run(
    capsys: pytest.CaptureFixture[str],
):
    report = {
        "recall": {
            "table": {
                "newsrag/temporal": {"recall@10": 1.0},
                "newsrag/generic": {"recall@10": 0.8},
                "m0/temporal": {"recall@10": 0.9},
                "m0/generic": {"recall@10": 1.0},
            }
        },
        "recall_heldout": {
            "table": {
                "newsrag/temporal": {"recall@10": 0.8},
                "newsrag/generic": {"recall@10": 0.6},
                "m0/temporal": {"recall@10": 0.4},
                "m0/generic": {"recall@10": 0.6},
            }
        },
        "throughput": {
            "rows": 100_000,
            "figures": {
                "newsrag/temporal": {"queries_per_s": 8.0, "mean_evidence": 0.5},
                "newsrag/generic": {"queries_per_s": 2.0, "mean_evidence": 5.0},
                "m0/temporal": {"queries_per_s": 4.0, "mean_evidence": 2.0},
                "m0/generic": {"queries_per_s": 1.0, "mean_evidence": 10.0},
            },
        },
    }
    emit(named_figures(report), "python -m bench.replay --json")
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"figures", "machine", "date", "command"}
    figures = out["figures"]
    assert figures["recall@10 m0/temporal"] == {
        "value": 0.9,
        "unit": "share of questions",
        "baseline": 1.0,
        "ratio": 0.9,
    }
    assert figures["recall@10 newsrag/generic"]["baseline"] is None
    assert figures["replay m0/temporal k=10, 100,000 interactions"] == {
        "value": 4.0,
        "unit": "queries/s",
        "baseline": 8.0,
        "ratio": 0.5,
    }
    assert figures["replay m0/generic k=10, 100,000 interactions"]["ratio"] == 0.5
    # the dev and held-out questions are separate figures, each against its own chunk baseline
    assert figures["recall@10 m0/temporal, held-out"] == {
        "value": 0.4,
        "unit": "share of questions",
        "baseline": 0.8,
        "ratio": 0.5,
    }
    assert figures["recall@10 newsrag/generic, held-out"]["value"] == 0.6
    # queries/s beside the work behind them: the evidence items each query returned, M0's against NewsRAG's
    assert figures["mean evidence m0/temporal k=10, 100,000 interactions"] == {
        "value": 2.0,
        "unit": "items per query",
        "baseline": 0.5,
        "ratio": 4.0,
    }
    assert figures["mean evidence newsrag/generic k=10, 100,000 interactions"]["baseline"] is None
    assert len(figures) == 16


def test_each_heldout_file_is_its_own_set_with_its_own_figures():
    """--heldout takes several files: the first keeps the names it always had, the second is "held-out-2", each
    against its own chunk baseline."""
    sets = heldout_sets([Path("a.jsonl"), Path("b.jsonl")])
    assert sets == [("recall_heldout", "held-out", Path("a.jsonl")), ("recall_heldout2", "held-out-2", Path("b.jsonl"))]
    assert heldout_sets([]) == []
    table = {"newsrag/temporal": {"recall@10": 1.0}, "newsrag/generic": {"recall@10": 0.5}}
    table |= {"m0/temporal": {"recall@10": 0.5}, "m0/generic": {"recall@10": 0.5}}
    figures = named_figures({"recall": {"table": table}, "recall_heldout2": {"table": table}})
    assert figures["recall@10 m0/temporal, held-out-2"]["ratio"] == 0.5
    assert figures["recall@10 m0/generic, held-out-2"]["ratio"] == 1.0
    assert not any(name.endswith(", held-out") for name in figures)
