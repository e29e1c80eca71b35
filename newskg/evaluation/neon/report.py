"""The replay's report: `report.json` (every query × method × strategy × k with its evidence, answer and each
judgement with its rationale, plus every aggregate below), `report.html` and PNGs:

- spike charts, one per entity (daily counts, rolling sum, threshold, spike days marked);
- per scorer, a table shaped like NEON Tables 4/5: method × strategy × attribute, mean and 95% bootstrap CI
  (numpy, seeded), at each method's own k (NewsRAG 5 chunks, NEON 10 interactions: the paper's comparable
  context lengths) — or the nearest k the run had;
- top-k curves (NEON Figure 4): mean score per attribute over k, one line per method, per strategy;
- response lengths in characters (NEON Table A3): per method × strategy, and per score level;
- queries with no evidence, per method × strategy;
- judge verdicts that could not be read (after one corrective retry): per table cell (`unparsed`, outside `n` and
  the mean) and per scorer × attribute over all answers (`unparsed`).

Judge tables (0–2) and proxy tables (0–1, `proxy_*`) are never merged: each scorer has its own."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np
from matplotlib.figure import Figure

from newskg.core.timeaxes import day_iso
from newskg.evaluation.kit.report import (
    Html,
    ReportFolder,
    bullets,
    images,
    link,
    page,
    paragraph,
    save_figure,
    section,
    table,
)
from newskg.evaluation.neon.methods import METHODS
from newskg.evaluation.neon.scoring import Scorer
from newskg.evaluation.neon.spikes import SpikeRule, SpikeSeries

if TYPE_CHECKING:  # for annotations only: the report reads the replay's records, it does not run the replay
    from newskg.evaluation.neon.replay import ReplayRecord

    Cells = dict[tuple[str, str, int], list[ReplayRecord]]  # (method, strategy, k) → its runs

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0
EMBEDDED_SPIKE_CHARTS = 12  # more entities: the page links to their PNGs instead of embedding them


class Interval(TypedDict):
    """A mean and its 95% bootstrap interval over `n` scores (None without scores)."""

    n: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None


class CellStats(Interval):
    unparsed: int  # verdicts the judge gave in no readable form: outside `n` and the mean


class TableRow(TypedDict):
    method: str
    label: str
    strategy: str
    k: int
    runs: int
    attributes: dict[str, CellStats]
    average: float | None  # over the attributes with a mean


class ScoreTable(TypedDict):
    """One scorer's table (NEON Tables 4/5): method × strategy at each method's own k."""

    family: str
    scale_max: float
    rows: list[TableRow]


class CurvePoint(TypedDict):
    """One point of the top-k curves (NEON Figure 4)."""

    method: str
    strategy: str
    k: int
    attributes: dict[str, CellStats]


class LengthStats(TypedDict):
    n: int
    mean: float | None
    median: float | None


class LengthRow(TypedDict):
    """Response characters of one method × strategy at its table k, overall (n, mean, median) and by score level."""

    method: str
    strategy: str
    k: int
    n: int
    mean: float | None
    median: float | None
    by_level: dict[str, LengthStats]  # "scorer:attribute:level" → stats


class NoEvidenceRow(TypedDict):
    method: str
    strategy: str
    queries: int
    no_evidence: int


class Summary(TypedDict):
    """Every aggregate of a replay (report.json's keys besides meta, spikes and runs)."""

    tables: dict[str, ScoreTable]  # per scorer
    unparsed: dict[str, dict[str, int]]  # per judge scorer and attribute
    topk: dict[str, list[CurvePoint]]  # per scorer
    lengths: list[LengthRow]
    no_evidence: list[NoEvidenceRow]


def bootstrap_ci(values: Sequence[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> Interval:
    """Mean and 95% percentile-bootstrap interval (resampling the values with replacement, seeded)."""
    data = np.asarray(values, dtype=float)
    if data.size == 0:
        return {"n": 0, "mean": None, "ci_low": None, "ci_high": None}
    rng = np.random.default_rng(seed)
    means = data[rng.integers(0, data.size, size=(samples, data.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return {"n": int(data.size), "mean": float(data.mean()), "ci_low": float(low), "ci_high": float(high)}


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "entity"


def spike_chart(series: SpikeSeries, rule: SpikeRule, origin: str) -> Figure:
    # matplotlib's stubs leave the **kwargs of its drawing calls untyped (reportUnknownMemberType below, alone)
    x = np.arange(len(series.days))
    fig = Figure(figsize=(10, 3.6))
    ax = fig.subplots()
    ax.bar(x, series.counts, color="#a0aec0", label="daily count")  # pyright: ignore[reportUnknownMemberType]
    rolling = [np.nan if r is None else r for r in series.rolling]
    ax.plot(x, rolling, color="#2b6cb0", label=f"{rule.window}-day rolling sum")  # pyright: ignore[reportUnknownMemberType]
    if series.threshold is not None:
        ax.axhline(series.threshold, color="#c05621", linestyle="--", label=f"mean + {rule.sigma:g}σ (strictly above)")  # pyright: ignore[reportUnknownMemberType]
    spikes = [i for i, d in enumerate(series.days) if d in set(series.spikes)]
    ax.scatter(spikes, [rolling[i] for i in spikes], color="#e53e3e", zorder=3, label="spike day")  # pyright: ignore[reportUnknownMemberType]
    ticks = x[:: max(1, len(x) // 10)]
    ax.set_xticks(ticks, [day_iso(series.days[int(i)]) for i in ticks], fontsize=7, rotation=30)  # pyright: ignore[reportUnknownMemberType]
    ax.set_title(f"{series.name} ({origin}): {len(series.spikes)} spike days", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    ax.legend(fontsize=7)  # pyright: ignore[reportUnknownMemberType]
    return fig


def write_spike_charts(spikes: Sequence[SpikeSeries], folder: Path, rule: SpikeRule, origin: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    return [
        save_figure(
            spike_chart(series, rule, origin),
            folder / f"spikes-{slug(series.name)}-{slug(series.entity_id)[:12]}.png",
            dpi=90,
        )
        for series in spikes
    ]


def table_k(method: str, ks: Sequence[int]) -> int:
    """The method's own k when the run has it, else the largest k below it, else the smallest."""
    wanted = METHODS[method].default_k
    below = [k for k in ks if k <= wanted]
    return max(below) if below else min(ks)


def _scores(records: list[ReplayRecord], scorer: str, attribute: str) -> list[float]:
    values = (r["judgements"][scorer]["attributes"].get(attribute, {}).get("score") for r in records)
    return [float(v) for v in values if v is not None]


def _unparsed(records: list[ReplayRecord], scorer: str, attribute: str) -> int:
    """Judgements whose verdict could not be read (after the one corrective retry): no score, counted apart.
    Proxies have no such state (a proxy without a score had nothing to measure): always 0 for them."""
    return sum(r["judgements"][scorer]["attributes"].get(attribute, {}).get("parsed") is False for r in records)


def _stats(records: list[ReplayRecord], scorer: str, attribute: str) -> CellStats:
    return {**bootstrap_ci(_scores(records, scorer, attribute)), "unparsed": _unparsed(records, scorer, attribute)}


def _cells(records: list[ReplayRecord]) -> Cells:
    cells: Cells = {}
    for r in records:
        cells.setdefault((r["method"], r["strategy"], r["k"]), []).append(r)
    return cells


@dataclass(frozen=True)
class Grid:
    """The replay's runs: every method × retrieval strategy × k (the config's order, which the tables keep)."""

    methods: Sequence[str]
    strategies: Sequence[str]
    ks: Sequence[int]


def aggregate(records: list[ReplayRecord], scorers: Sequence[Scorer], grid: Grid) -> Summary:
    methods, strategies, ks = grid.methods, grid.strategies, grid.ks
    cells = _cells(records)
    tables: dict[str, ScoreTable] = {}
    curves: dict[str, list[CurvePoint]] = {}
    for scorer in scorers:
        rows: list[TableRow] = []
        for strategy in strategies:
            for method in methods:
                k = table_k(method, ks)
                chosen = cells.get((method, strategy, k), [])
                stats = {a: _stats(chosen, scorer.name, a) for a in scorer.attributes}
                means = [s["mean"] for s in stats.values() if s["mean"] is not None]
                rows.append(
                    {
                        "method": method,
                        "label": METHODS[method].label,
                        "strategy": strategy,
                        "k": k,
                        "runs": len(chosen),
                        "attributes": stats,
                        "average": sum(means) / len(means) if means else None,
                    }
                )
        tables[scorer.name] = {"family": scorer.family, "scale_max": scorer.scale_max, "rows": rows}
        curves[scorer.name] = [
            {
                "method": method,
                "strategy": strategy,
                "k": k,
                "attributes": {
                    a: _stats(cells.get((method, strategy, k), []), scorer.name, a) for a in scorer.attributes
                },
            }
            for strategy in strategies
            for method in methods
            for k in ks
        ]
    return {
        "tables": tables,
        "unparsed": {
            s.name: {a: _unparsed(records, s.name, a) for a in s.attributes} for s in scorers if s.family == "judge"
        },
        "topk": curves,
        "lengths": _lengths(cells, scorers, methods, strategies, ks),
        "no_evidence": _no_evidence(cells, methods, strategies, ks),
    }


def _lengths(
    cells: Cells, scorers: Sequence[Scorer], methods: Sequence[str], strategies: Sequence[str], ks: Sequence[int]
) -> list[LengthRow]:
    """Response characters per method × strategy at its table k, overall and by score level (0, 1, 2: the
    judges' scale; proxies in [0, 1] are put on it as round(2 × score))."""
    rows: list[LengthRow] = []
    for strategy in strategies:
        for method in methods:
            k = table_k(method, ks)
            chosen = cells.get((method, strategy, k), [])
            chars = [r["response_chars"] for r in chosen]
            by_level: dict[str, LengthStats] = {}
            for scorer in scorers:
                for attribute in scorer.attributes:
                    for level in (0, 1, 2):
                        picked = [
                            r["response_chars"]
                            for r in chosen
                            if (s := r["judgements"][scorer.name]["attributes"].get(attribute, {}).get("score"))
                            is not None
                            and round(2 * s / scorer.scale_max) == level
                        ]
                        by_level[f"{scorer.name}:{attribute}:{level}"] = _length_stats(picked)
            rows.append({"method": method, "strategy": strategy, "k": k, **_length_stats(chars), "by_level": by_level})
    return rows


def _length_stats(chars: list[int]) -> LengthStats:
    if not chars:
        return {"n": 0, "mean": None, "median": None}
    return {"n": len(chars), "mean": float(np.mean(chars)), "median": float(np.median(chars))}


def _no_evidence(
    cells: Cells, methods: Sequence[str], strategies: Sequence[str], ks: Sequence[int]
) -> list[NoEvidenceRow]:
    """Distinct (query, day) pairs without any evidence at the largest k (then at every k: the lists are
    prefixes)."""
    deepest = max(ks)
    rows: list[NoEvidenceRow] = []
    for strategy in strategies:
        for method in methods:
            chosen = cells.get((method, strategy, deepest), [])
            empty = {(r["query"], r["day"]) for r in chosen if not r["evidence"]}
            rows.append({"method": method, "strategy": strategy, "queries": len(chosen), "no_evidence": len(empty)})
    return rows


def topk_chart(
    curves: list[CurvePoint], scorer: Scorer, strategies: Sequence[str], methods: Sequence[str], ks: Sequence[int]
) -> Figure:
    attributes = scorer.attributes
    fig = Figure(figsize=(3.4 * len(attributes), 2.8 * len(strategies)))
    axes = fig.subplots(len(strategies), len(attributes), squeeze=False)
    for row, strategy in enumerate(strategies):
        for col, attribute in enumerate(attributes):
            ax = axes[row][col]
            for method in methods:
                points = [c for c in curves if c["method"] == method and c["strategy"] == strategy]
                ys = [c["attributes"][attribute]["mean"] for c in sorted(points, key=lambda c: c["k"])]
                ax.plot(sorted(ks), [np.nan if y is None else y for y in ys], marker="o", label=METHODS[method].label)
            ax.set_title(f"{strategy}: {attribute}", fontsize=8)
            ax.set_xlabel("top-k", fontsize=7)
            ax.set_xticks(sorted(ks))
            ax.set_ylim(0, scorer.scale_max)
            ax.tick_params(labelsize=7)
    axes[0][0].legend(fontsize=7)
    kind = "offline proxies, not judge scores" if scorer.family == "proxy" else "LLM judge, 0-2"
    fig.suptitle(f"Top-k curves ({scorer.name}: {kind})")  # pyright: ignore[reportUnknownMemberType] (**kwargs untyped)
    return fig


def write_report(
    folder: Path,
    records: list[ReplayRecord],
    scorers: Sequence[Scorer],
    spikes: Sequence[SpikeSeries],
    meta: Mapping[str, Any],  # ReplayMeta's JSON form (report.json "meta")
    grid: Grid,
) -> tuple[Summary, dict[str, Path]]:
    out = ReportFolder(folder)
    rule = SpikeRule(meta["rule"]["window"], meta["rule"]["sigma"])
    summary = aggregate(records, scorers, grid)
    methods, strategies, ks = grid.methods, grid.strategies, grid.ks
    charts = write_spike_charts(spikes, folder, rule, meta["origin"])
    out.json({"meta": meta, **summary, "spikes": [s.as_dict() for s in spikes], "runs": records})
    topk = [
        out.figure(topk_chart(summary["topk"][s.name], s, strategies, methods, ks), f"topk-{s.name}.png", dpi=90)
        for s in scorers
    ]
    out.html(_page(meta, summary, scorers, charts, topk))
    return summary, out.paths


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _score_cell(stats: CellStats) -> Html:
    """Mean, then its interval, count and unparsed verdicts in small print: numbers only, so markup is safe."""
    unparsed = f", unparsed={stats['unparsed']}" if stats.get("unparsed") else ""
    interval = f"[{_fmt(stats['ci_low'])}, {_fmt(stats['ci_high'])}] n={stats['n']}{unparsed}"
    return Html(f"{_fmt(stats['mean'])} <small>{interval}</small>")


def _score_table(name: str, table_data: ScoreTable, scorer: Scorer) -> Html:
    kind = "offline PROXIES (0–1), not judge scores" if table_data["family"] == "proxy" else f"LLM judge, 0–2 ({name})"
    rows = [
        [r["strategy"], r["label"], r["k"], r["runs"], *map(_score_cell, r["attributes"].values()), _fmt(r["average"])]
        for r in table_data["rows"]
    ]
    head = ["strategy", "method", "k", "runs", *scorer.attributes, "avg."]
    return section(f"{name}: {kind}", table(head, rows), level=3)


def _log_line(meta: Mapping[str, Any]) -> Html:
    log = meta.get("log")
    if not log:
        return paragraph(
            "No query log: news-side spikes from the graph's daily mention counts; each query is the entity's name "
            "on its spike day."
        )
    privacy = (
        f"dropped {log['dropped_queries']} distinct queries ({log['dropped_issues']} issues)"
        if log["privacy_applied"]
        else "not applied: the log has no user ids"
    )
    return paragraph(
        f"log {log['path']}: {log['rows']} rows, {log['malformed']} malformed; privacy rule (at least "
        f"{log['privacy_min_users']} distinct users) {privacy}; {meta.get('unlinked_queries', 0)} query-days linked "
        "to no entity as of their day."
    )


def _page(
    meta: Mapping[str, Any], summary: Summary, scorers: Sequence[Scorer], charts: list[Path], topk: list[Path]
) -> Html:
    rule = meta["rule"]
    lengths = [
        [r["strategy"], METHODS[r["method"]].label, r["k"], r["n"], _fmt(r["mean"], 0), _fmt(r["median"], 0)]
        for r in summary["lengths"]
    ]
    empty = [
        [r["strategy"], METHODS[r["method"]].label, r["queries"], r["no_evidence"]] for r in summary["no_evidence"]
    ]
    return page(
        "NEON spike-day replay",
        {"answers": meta["answerer"], "scores": meta["scores"], "origin": meta["origin"]},
        paragraph(
            f"{meta['queries']} queries on {meta['spike_days']} spike days × methods {', '.join(meta['methods'])} × "
            f"strategies {', '.join(meta['strategies'])} × k {', '.join(map(str, meta['ks']))} = {meta['runs']} "
            "answers, each as of its day (published and ingested by its end)."
        ),
        paragraph(
            f"Spike rule: {rule['window']}-day trailing rolling sum strictly above mean + {rule['sigma']:g}σ "
            "(sample σ) of the rolling sums."
        ),
        _log_line(meta),
        section(
            "Scores (NEON Tables 4/5 shape; mean [95% bootstrap CI])",
            *(_score_table(s.name, summary["tables"][s.name], s) for s in scorers),
        ),
        section("Top-k (NEON Figure 4)", images(topk)),
        section("Response length (characters)", table(["strategy", "method", "k", "n", "mean", "median"], lengths)),
        section(
            "Queries with no evidence (at the largest k)",
            table(["strategy", "method", "queries", "no evidence"], empty),
        ),
        section(
            "Spike days",
            images(charts[:EMBEDDED_SPIKE_CHARTS]),
            bullets(link(p) for p in charts[EMBEDDED_SPIKE_CHARTS:]),
        ),
    )
