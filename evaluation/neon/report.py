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

import html
import json
import re
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt
import numpy as np

from core.timeaxes import day_iso
from evaluation.neon.methods import METHODS
from evaluation.neon.scoring import Scorer
from evaluation.neon.spikes import SpikeRule, SpikeSeries
from evaluation.neoqa.report import img_tag

BOOTSTRAP_SAMPLES = 1000
BOOTSTRAP_SEED = 0
EMBEDDED_SPIKE_CHARTS = 12  # more entities: the page links to their PNGs instead of embedding them


def bootstrap_ci(values: Sequence[float], samples: int = BOOTSTRAP_SAMPLES, seed: int = BOOTSTRAP_SEED) -> dict:
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


def spike_chart(series: SpikeSeries, path: Path, rule: SpikeRule, origin: str) -> None:
    x = np.arange(len(series.days))
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.bar(x, series.counts, color="#a0aec0", label="daily count")
    rolling = [np.nan if r is None else r for r in series.rolling]
    ax.plot(x, rolling, color="#2b6cb0", label=f"{rule.window}-day rolling sum")
    if series.threshold is not None:
        ax.axhline(series.threshold, color="#c05621", linestyle="--", label=f"mean + {rule.sigma:g}σ (strictly above)")
    spikes = [i for i, d in enumerate(series.days) if d in set(series.spikes)]
    ax.scatter(spikes, [rolling[i] for i in spikes], color="#e53e3e", zorder=3, label="spike day")
    ticks = x[:: max(1, len(x) // 10)]
    ax.set_xticks(ticks, [day_iso(series.days[i]) for i in ticks], fontsize=7, rotation=30)
    ax.set_title(f"{series.name} ({origin}): {len(series.spikes)} spike days", fontsize=10)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_spike_charts(spikes: Sequence[SpikeSeries], folder: Path, rule: SpikeRule, origin: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for series in spikes:
        path = folder / f"spikes-{slug(series.name)}-{slug(series.entity_id)[:12]}.png"
        spike_chart(series, path, rule, origin)
        paths.append(path)
    return paths


def table_k(method: str, ks: Sequence[int]) -> int:
    """The method's own k when the run has it, else the largest k below it, else the smallest."""
    wanted = METHODS[method].default_k
    below = [k for k in ks if k <= wanted]
    return max(below) if below else min(ks)


def _scores(records: list[dict], scorer: str, attribute: str) -> list[float]:
    values = (r["judgements"][scorer]["attributes"].get(attribute, {}).get("score") for r in records)
    return [float(v) for v in values if v is not None]


def _unparsed(records: list[dict], scorer: str, attribute: str) -> int:
    """Judgements whose verdict could not be read (after the one corrective retry): no score, counted apart.
    Proxies have no such state (a proxy without a score had nothing to measure): always 0 for them."""
    return sum(r["judgements"][scorer]["attributes"].get(attribute, {}).get("parsed") is False for r in records)


def _stats(records: list[dict], scorer: str, attribute: str) -> dict:
    return bootstrap_ci(_scores(records, scorer, attribute)) | {"unparsed": _unparsed(records, scorer, attribute)}


def _cells(records: list[dict]) -> dict[tuple[str, str, int], list[dict]]:
    cells: dict[tuple[str, str, int], list[dict]] = {}
    for r in records:
        cells.setdefault((r["method"], r["strategy"], r["k"]), []).append(r)
    return cells


def aggregate(records: list[dict], scorers: Sequence[Scorer], methods: Sequence[str], strategies, ks) -> dict:
    cells = _cells(records)
    tables, curves = {}, {}
    for scorer in scorers:
        rows = []
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


def _lengths(cells, scorers: Sequence[Scorer], methods, strategies, ks) -> list[dict]:
    """Response characters per method × strategy at its table k, overall and by score level (0, 1, 2: the
    judges' scale; proxies in [0, 1] are put on it as round(2 × score))."""
    rows = []
    for strategy in strategies:
        for method in methods:
            k = table_k(method, ks)
            chosen = cells.get((method, strategy, k), [])
            chars = [r["response_chars"] for r in chosen]
            by_level: dict[str, dict] = {}
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


def _length_stats(chars: list[int]) -> dict:
    if not chars:
        return {"n": 0, "mean": None, "median": None}
    return {"n": len(chars), "mean": float(np.mean(chars)), "median": float(np.median(chars))}


def _no_evidence(cells, methods, strategies, ks) -> list[dict]:
    """Distinct (query, day) pairs without any evidence at the largest k (then at every k: the lists are
    prefixes)."""
    deepest = max(ks)
    rows = []
    for strategy in strategies:
        for method in methods:
            chosen = cells.get((method, strategy, deepest), [])
            empty = {(r["query"], r["day"]) for r in chosen if not r["evidence"]}
            rows.append({"method": method, "strategy": strategy, "queries": len(chosen), "no_evidence": len(empty)})
    return rows


def topk_chart(curves: list[dict], scorer: Scorer, strategies, methods, ks, path: Path) -> None:
    attributes = scorer.attributes
    fig, axes = plt.subplots(
        len(strategies), len(attributes), figsize=(3.4 * len(attributes), 2.8 * len(strategies)), squeeze=False
    )
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
    fig.suptitle(f"Top-k curves ({scorer.name}: {kind})")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_report(
    folder: Path,
    records: list[dict],
    scorers: Sequence[Scorer],
    spikes: Sequence[SpikeSeries],
    meta: dict,
    methods: Sequence[str],
    strategies: Sequence[str],
    ks: Sequence[int],
) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rule = SpikeRule(meta["rule"]["window"], meta["rule"]["sigma"])
    summary = aggregate(records, scorers, methods, strategies, ks)
    charts = write_spike_charts(spikes, folder, rule, meta["origin"])
    paths: dict[str, Path] = {"json": folder / "report.json", "html": folder / "report.html"}
    for scorer in scorers:
        paths[f"topk-{scorer.name}"] = folder / f"topk-{scorer.name}.png"
        topk_chart(summary["topk"][scorer.name], scorer, strategies, methods, ks, paths[f"topk-{scorer.name}"])
    document = {
        "meta": meta,
        **summary,
        "spikes": [s.as_dict() for s in spikes],
        "runs": records,
    }
    paths["json"].write_text(json.dumps(document, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    paths["html"].write_text(_html(meta, summary, scorers, charts, paths), encoding="utf-8")
    return paths


def _fmt(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _table_html(name: str, table: dict, scorer: Scorer) -> str:
    heads = "".join(f"<th>{html.escape(a)}</th>" for a in scorer.attributes)
    body = ""
    for row in table["rows"]:
        cells = "".join(
            f"<td>{_fmt(s['mean'])} <small>[{_fmt(s['ci_low'])}, {_fmt(s['ci_high'])}] n={s['n']}"
            + (f", unparsed={s['unparsed']}" if s.get("unparsed") else "")
            + "</small></td>"
            for s in row["attributes"].values()
        )
        body += (
            f"<tr><td>{row['strategy']}</td><td>{html.escape(row['label'])}</td><td>{row['k']}</td>"
            f"<td>{row['runs']}</td>{cells}<td>{_fmt(row['average'])}</td></tr>"
        )
    kind = (
        "offline PROXIES (0–1), not judge scores"
        if table["family"] == "proxy"
        else f"LLM judge, 0–2 ({html.escape(name)})"
    )
    return (
        f"<h3>{html.escape(name)}: {kind}</h3><table><tr><th>strategy</th><th>method</th><th>k</th><th>runs</th>"
        f"{heads}<th>avg.</th></tr>{body}</table>"
    )


def _html(meta: dict, summary: dict, scorers: Sequence[Scorer], charts: list[Path], paths: dict[str, Path]) -> str:
    log = meta.get("log")
    log_html = (
        f"<p>log {html.escape(log['path'])}: {log['rows']} rows, {log['malformed']} malformed; privacy rule "
        f"(at least {log['privacy_min_users']} distinct users) "
        + (
            f"dropped {log['dropped_queries']} distinct queries ({log['dropped_issues']} issues)"
            if log["privacy_applied"]
            else "not applied: the log has no user ids"
        )
        + f"; {meta.get('unlinked_queries', 0)} query-days linked to no entity as of their day.</p>"
        if log
        else "<p>No query log: news-side spikes from the graph's daily mention counts; each query is the entity's "
        "name on its spike day.</p>"
    )
    rule = meta["rule"]
    tables = "".join(_table_html(s.name, summary["tables"][s.name], s) for s in scorers)
    topk = "".join(f"<p>{img_tag(paths[f'topk-{s.name}'])}</p>" for s in scorers)
    lengths = "".join(
        f"<tr><td>{r['strategy']}</td><td>{METHODS[r['method']].label}</td><td>{r['k']}</td><td>{r['n']}</td>"
        f"<td>{_fmt(r['mean'], 0)}</td><td>{_fmt(r['median'], 0)}</td></tr>"
        for r in summary["lengths"]
    )
    empty = "".join(
        f"<tr><td>{r['strategy']}</td><td>{METHODS[r['method']].label}</td><td>{r['queries']}</td>"
        f"<td>{r['no_evidence']}</td></tr>"
        for r in summary["no_evidence"]
    )
    embedded = "".join(f"<p>{img_tag(p)}</p>" for p in charts[:EMBEDDED_SPIKE_CHARTS])
    linked = "".join(
        f'<li><a href="{html.escape(p.name)}">{html.escape(p.name)}</a></li>' for p in charts[EMBEDDED_SPIKE_CHARTS:]
    )
    return (
        "<!doctype html><meta charset=utf-8><title>NEON replay</title>"
        "<style>body{font-family:sans-serif} td,th{padding:3px 8px;border:1px solid #ccc} small{color:#555}</style>"
        f"<h1>NEON spike-day replay</h1><p>{meta['queries']} queries on {meta['spike_days']} spike days × "
        f"methods {', '.join(meta['methods'])} × strategies {', '.join(meta['strategies'])} × k "
        f"{', '.join(map(str, meta['ks']))} = {meta['runs']} answers, each as of its day (published and ingested "
        f"by its end). Answers: {html.escape(meta['answerer'])}. Scores: {html.escape(meta['scores'])}.</p>"
        f"<p>Spike rule: {rule['window']}-day trailing rolling sum strictly above mean + {rule['sigma']:g}σ "
        f"(sample σ) of the rolling sums.</p>{log_html}"
        f"<h2>Scores (NEON Tables 4/5 shape; mean [95% bootstrap CI])</h2>{tables}"
        f"<h2>Top-k (NEON Figure 4)</h2>{topk}"
        "<h2>Response length (characters)</h2><table><tr><th>strategy</th><th>method</th><th>k</th><th>n</th>"
        f"<th>mean</th><th>median</th></tr>{lengths}</table>"
        "<h2>Queries with no evidence (at the largest k)</h2><table><tr><th>strategy</th><th>method</th>"
        f"<th>queries</th><th>no evidence</th></tr>{empty}</table>"
        f"<h2>Spike days</h2>{embedded}<ul>{linked}</ul>"
    )
