"""bench/graph.py measures what the pipeline writes: every batched row carries its full provenance, and the figure
is the median of the runs against the per-row baseline."""

from __future__ import annotations

import os
import random

from bench.figures import process_cpu_s
from bench.graph import GraphRates, graph_figures, provenance_batch, synthetic
from newskg.graph.store.mentions import ingested_day


def test_every_row_carries_chunk_article_source_mentions_and_three_time_axes() -> None:
    rows = synthetic(40, random.Random(1))
    batch = provenance_batch(rows)
    assert len(batch["chunks"]) == len(batch["interactions"]) == 40
    for row in rows:
        chunk, interaction = row.chunk, row.interaction
        assert chunk.article_id and chunk.url and chunk.source_id and chunk.source
        assert interaction.chunk_ids == [chunk.id]
        assert interaction.article_ids == [chunk.article_id] and interaction.source_ids == [chunk.source_id]
        assert {(chunk.id, interaction.subject_id), (chunk.id, interaction.object_id)} <= set(batch["mentions"])
        assert {e.id for e in row.entities} == {interaction.subject_id, interaction.object_id}
        # three time axes, all distinct: the event before its publication, ingested after it
        assert interaction.event_day < interaction.published_day == chunk.day
        assert ingested_day(interaction.ingested_ms) >= chunk.day
        assert interaction.ingested_ms == chunk.ingested_ms
    assert any(ingested_day(r.chunk.ingested_ms) > r.chunk.day + 1 for r in rows)  # backfills among them


def test_a_single_row_write_is_the_batch_write_of_that_row() -> None:
    row = synthetic(1, random.Random(2))[0]
    single = row.write()
    assert single == provenance_batch([row])
    assert single["chunks"] == [row.chunk] and single["interactions"] == [row.interaction]


def test_the_figure_is_the_median_run_against_the_per_row_baseline() -> None:
    figures = graph_figures(GraphRates(batched=[900.0, 1500.0, 1200.0], per_row=50.0, readback=4000.0), "shape")
    main = figures["graph_batch_rows_per_s"]
    assert (main["value"], main["baseline"], main["ratio"]) == (1200, 50, 24.0)
    assert "min 900" in main["unit"] and "max 1,500" in main["unit"]
    assert figures["graph_batch_rows_per_s_min"]["value"] == 900
    assert figures["graph_batch_rows_per_s_max"]["value"] == 1500


def test_the_cpu_a_row_cost_is_the_median_run_and_gives_the_servers_bound() -> None:
    rates = GraphRates(batched=[1.0, 2.0, 3.0], per_row=1.0, readback=1.0, server_cpu_us=[250.0, 200.0, 300.0])
    figures = graph_figures(rates, "shape")
    assert figures["graph_server_cpu_us_per_row"]["value"] == 250.0
    assert "bound 4,000/s" in figures["graph_server_cpu_us_per_row"]["unit"]
    assert "graph_client_cpu_us_per_row" not in figures, "no figure for what was not measured"


def test_process_cpu_is_read_for_a_live_process_and_none_for_a_missing_one() -> None:
    busy = sum(i * i for i in range(200_000))
    assert busy and (process_cpu_s(os.getpid()) or 0.0) > 0.0
    assert process_cpu_s(None) is None
