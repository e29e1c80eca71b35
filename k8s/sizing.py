"""Memory of the process pods, derived from k8s/sizing.yaml (measured per-item costs, each overlay's daily
volume): the one place the figures in the overlays' limits and the README's capacity table come from.

`python k8s/sizing.py` prints, per overlay, the memory a process replica needs and the limit to set (whole GiB),
then the README table's dedup column. tests/unit/test_k8s_sizing.py checks both against the manifests and the
README."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

INPUTS = Path(__file__).with_name("sizing.yaml")
GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True)
class ProcessPod:
    """A process replica holds the whole dedup window's signatures (README "Dedup state"), whatever the replicas."""

    articles_per_day: int
    window_days: int
    signatures: int
    index_bytes: int  # as measured: arrays just full, no evicted rows
    steady_bytes: int  # that index plus the stage itself: the pod's memory request
    peak_bytes: int  # the index at its worst moment plus the stage: the pod's memory limit

    @property
    def request_gib(self) -> int:
        return math.ceil(self.steady_bytes / GIB)

    @property
    def limit_gib(self) -> int:
        return math.ceil(self.peak_bytes / GIB)


def inputs(path: Path = INPUTS) -> dict[str, Any]:
    return yaml.safe_load(path.read_text())


def peak_bytes_per_signature(measured: dict[str, Any], layout: dict[str, Any]) -> float:
    """The measured cost holds one signature row per slot with the arrays just full. At worst, evicted rows make up
    a quarter of the slots (compaction waits for that) and a doubling copies the rows: the old array beside one
    twice its size. So the rows' share is counted 1 + growth times, and everything over the slots in use."""
    row = layout["signature_row_bytes"]
    rows_measured = row * measured["dedup_slots_at_measurement"] / measured["dedup_signatures_at_measurement"]
    other = measured["dedup_bytes_per_signature"] - rows_measured
    return (other + row * (1 + layout["growth_factor"])) / layout["compact_when_alive_below"]


def process_pod(sizing: dict[str, Any], articles_per_day: int, window_days: int) -> ProcessPod:
    measured, layout = sizing["measured"], sizing["index_layout"]
    signatures = math.ceil(articles_per_day * measured["chunks_per_article"] * window_days)
    base = measured["process_base_mib"] * MIB
    index = signatures * measured["dedup_bytes_per_signature"]
    peak = signatures * peak_bytes_per_signature(measured, layout) + base
    return ProcessPod(articles_per_day, window_days, signatures, index, index + base, math.ceil(peak))


def overlay_pods(sizing: dict[str, Any]) -> dict[str, ProcessPod]:
    return {
        name: process_pod(sizing, volume["articles_per_day"], volume["dedup_window_days"])
        for name, volume in sizing["overlays"].items()
    }


def readme_cell(pod: ProcessPod) -> str:
    """The README table's dedup column: the index as measured, and the pod limit its worst moment needs."""
    return f"{pod.index_bytes / GIB:.1f} GiB; {pod.request_gib:,} / {pod.limit_gib:,} GiB"


def main() -> None:
    sizing = inputs()
    for name, pod in overlay_pods(sizing).items():
        print(f"{name}: {pod.articles_per_day:,} articles/day x {pod.window_days} d = {pod.signatures:,} signatures")
        sizes = (pod.index_bytes / GIB, pod.steady_bytes / GIB, pod.peak_bytes / GIB)
        print("  index {:.2f} GiB, steady {:.2f}, peak {:.2f}".format(*sizes))
        print(f"  process pod memory: request {pod.request_gib}Gi, limit {pod.limit_gib}Gi")
    for row in sizing["readme_rows"]:
        pod = process_pod(sizing, row["articles_per_day"], row["dedup_window_days"])
        print(f"README {pod.articles_per_day:,}/day, {pod.window_days} d: {readme_cell(pod)}")


if __name__ == "__main__":
    main()
