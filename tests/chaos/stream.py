"""The chaos tests' stream and what they compare: ≥ 300 articles (the bundled real pages, backfilled, and one
synthetic timeline) in one partition, so every run sees them in the same order; a run's final graph and mirror as
comparable values."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, TIME_FIELDS
from newskg.graph.store.store import GraphStore
from newskg.wiring import new_mirror, open_graph
from tests.support.articles import NEWS_HTML
from tests.support.cli import newskg, newskg_json
from tests.support.isolation import Isolated

SYNTHETIC_SEED = 18
# One timeline, 12 articles an event: 25 events and the 8 real pages make the issue's ≥ 300, in `make test` too
# (308 articles: 632 s for the undisturbed and the disturbed run together on 2 loaded cores, 2026-11-23, since a
# restarted extract stage resumes from its linking journals). NEWSKG_CHAOS_EVENTS=4 (56 articles) for a quick run.
SYNTHETIC_EVENTS = int(os.environ.get("NEWSKG_CHAOS_EVENTS", "25"))


def produce_stream(isolated: Isolated, folder: Path) -> int:
    """Send the stream into the world's articles topic; the number of articles sent."""
    real = newskg_json("ingest", "files", str(NEWS_HTML), "--backfill", "--date", "2023-05-05", env=isolated.env)
    synthetic = newskg_json(
        "ingest", "synthetic", "--timelines", "1", "--events", str(SYNTHETIC_EVENTS), "--seed", str(SYNTHETIC_SEED),
        "--out", str(folder / "synthetic"), env=isolated.env,
    )  # fmt: skip
    return int(real["sent"]) + int(synthetic["sent"])


def stream_world(isolated: Isolated) -> Isolated:
    """One partition (the same arrival order in every run), small process batches (more batch boundaries to
    crash between)."""
    return isolated.configured(topic_partitions=1, process_batch_size=8)


class NoEmbedder:
    """Reading payloads embeds nothing."""

    name = "none"

    @property
    def dim(self) -> int:
        raise AssertionError("a snapshot embeds nothing")

    def embed(self, texts: list[str]) -> list[list[float]]:
        raise AssertionError("a snapshot embeds nothing")


@dataclass(frozen=True)
class Snapshot:
    """What a run leaves: the graph export (sorted lines), the ids per label, the counts (graph and mirror) and
    the mirror's time payloads per collection (graph id -> the TIME_FIELDS)."""

    export: list[str]
    ids: dict[str, list[str]]
    counts: dict[str, Any]
    mirror_times: dict[str, dict[str, dict[str, Any]]]


def snapshot(isolated: Isolated, folder: Path) -> Snapshot:
    out = folder / f"{isolated.prefix}-export.jsonl"
    newskg("graph", "export", "--format", "jsonl", "--out", str(out), env=isolated.env)
    counts = newskg_json("graph", "stats", env=isolated.env)
    with open_graph(isolated.settings) as conn:
        store = GraphStore(conn)
        ids = {label: sorted(store.ids(label)) for label in ("Article", "Chunk", "Entity", "Interaction")}
    mirror = new_mirror(isolated.settings, NoEmbedder())
    try:
        times = {
            c: {gid: {f: p.get(f) for f in TIME_FIELDS[c]} for gid, p in mirror.time_payloads(c).items()}
            for c in (INTERACTIONS, CHUNKS)
        }
    finally:
        mirror.close()
    return Snapshot(sorted(out.read_text().splitlines()), ids, counts, times)
