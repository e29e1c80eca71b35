"""`newskg eval spikes`, `newskg eval replay` and `newskg eval querylog`: NEON §3–4 over our own graph."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from newskg.cli.evaluate import evaluate
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.core.settings import get_settings

app = typer.Typer()  # eval spikes, replay, querylog: added to the `eval` group by app.py

SCORES = ("auto", "judges", "proxies")
LOG = typer.Option(None, "--log", help="Query log: CSV (header timestamp,query[,user_id][,count]) or JSONL.")
FROM_GRAPH = typer.Option(False, "--from-graph", help="No log: news-side spikes from the graph's daily mentions.")
ENTITY = typer.Option(None, "--entity", help="Only this entity (a name, resolved as the QA layer does).")
TOP = typer.Option(20, "--top", min=1, help="--from-graph without --entity: the entities with most interactions.")
WINDOW = typer.Option(None, "--window", min=1, help="Rolling-sum days (default NEWSKG_NEON_SPIKE_WINDOW, 3).")
SIGMA = typer.Option(None, "--sigma", min=0.0, help="σ multiplier (default NEWSKG_NEON_SPIKE_SIGMA, 1).")
MIN_USERS = typer.Option(None, "--min-users", min=1, help="Privacy rule (default NEWSKG_NEON_MIN_USERS, 5).")


def _csv(value: str, option: str, allowed: tuple[str, ...] | None = None) -> list[str]:
    items = [v.strip().lower() for v in value.split(",") if v.strip()]
    if not items:
        fail(f"{option} needs at least one value")
    bad = [v for v in items if allowed is not None and v not in allowed]
    if bad:
        fail(f"{option}: {', '.join(bad)} not among {', '.join(allowed or ())}")
    return list(dict.fromkeys(items))


def _ks(value: str) -> list[int]:
    try:
        ks = sorted({int(k) for k in _csv(value, "--k")})
    except ValueError:
        fail(f"--k must be comma-separated whole numbers, not {value!r}")
    if min(ks) < 1:
        fail("--k values must be at least 1")
    return ks


def _source(log: Path | None, from_graph: bool) -> None:
    if (log is None) == (not from_graph):
        fail("give exactly one of --log FILE or --from-graph")


@app.command("spikes")
def eval_spikes(
    log: Path | None = LOG,
    from_graph: bool = FROM_GRAPH,
    entity: str | None = ENTITY,
    top: int = TOP,
    window: int | None = WINDOW,
    sigma: float | None = SIGMA,
    min_users: int | None = MIN_USERS,
    out: Path | None = typer.Option(None, "--out", help="Folder for the PNGs (default <data dir>/eval/spikes)."),
    as_json: bool = JsonOption,
) -> None:
    """Spike days per entity (NEON §3): from a query log, or from the graph's daily mention counts."""
    from newskg.evaluation.neon.run import SpikesConfig, run_spikes

    _source(log, from_graph)
    config = SpikesConfig(log=log, entity=entity, top=top, window=window, sigma=sigma, min_users=min_users, out=out)
    report = evaluate(lambda wiring, progress: run_spikes(config, wiring, progress), as_json)
    emit(report.model_dump(), as_json, _render_spikes)


def _render_spikes(r: dict[str, Any]) -> None:
    if r["log"]:
        log = r["log"]
        dropped = (
            f"privacy rule dropped {log['dropped_queries']} queries ({log['dropped_issues']} issues)"
            if log["privacy_applied"]
            else "no user ids: privacy rule not applied"
        )
        console.print(
            f"{log['rows']} rows, {log['malformed']} malformed; {dropped}; {log['unlinked_queries']} query-days "
            "linked to no entity as of their day"
        )
    table = Table(title=f"Spike days ({r['origin']}; {r['rule']['window']}-day sum > mean + {r['rule']['sigma']:g}σ)")
    for column in ("entity", "threshold", "spike days"):
        table.add_column(column, overflow="fold")
    for e in r["entities"]:
        threshold = "-" if e["threshold"] is None else f"{e['threshold']:.1f}"
        table.add_row(e["name"], threshold, ", ".join(e["spike_days"]) or "-")
    console.print(table)
    if r["entities"]:
        console.print(f"charts: {Path(r['entities'][0]['chart']).parent}")
    console.print(f"spike days for the explorer: {r['file']}")


@app.command("replay")
def eval_replay(
    out: Path = typer.Option(..., "--out", help="Report folder (report.json, report.html, PNGs)."),
    log: Path | None = LOG,
    from_graph: bool = FROM_GRAPH,
    methods: str = typer.Option("newsrag,m0,m1,m2", "--methods", help="newsrag, m0, m1, m2 (comma-separated)."),
    strategies: str = typer.Option("temporal,generic", "--strategies", help="temporal, generic."),
    ks: str = typer.Option("1,3,5,10,20", "--k", help="Top-k values (comma-separated)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="A seeded sample of this many queries."),
    entity: str | None = ENTITY,
    top: int = TOP,
    window: int | None = WINDOW,
    sigma: float | None = SIGMA,
    min_users: int | None = MIN_USERS,
    scores: str = typer.Option(
        "auto", "--scores", help="auto (judges with an LLM, else proxies) | judges | proxies. Never mixed."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the --limit sample and the bootstrap."),
    as_json: bool = JsonOption,
) -> None:
    """Answer every query of every spike day as of that day, by every method × strategy × k; score; report."""
    from newskg.evaluation.neon.methods import METHODS, STRATEGIES
    from newskg.evaluation.neon.run import ReplayConfig, run

    _source(log, from_graph)
    chosen = {
        "methods": _csv(methods, "--methods", tuple(METHODS)),
        "strategies": _csv(strategies, "--strategies", STRATEGIES),
        "ks": _ks(ks),
    }
    if scores not in SCORES:
        fail(f"--scores must be auto, judges or proxies, not {scores!r}")
    config = ReplayConfig.model_validate(
        {
            "out": out,
            "log": log,
            **chosen,
            "limit": limit,
            "entity": entity,
            "top": top,
            "window": window,
            "sigma": sigma,
            "min_users": min_users,
            "scores": scores,
            "seed": seed,
        }
    )
    report = evaluate(lambda wiring, progress: run(config, wiring, progress), as_json)
    emit(report.model_dump(), as_json, _render_replay)


def _render_replay(r: dict[str, Any]) -> None:
    meta = r["meta"]
    console.print(
        f"{meta['queries']} queries on {meta['spike_days']} spike days ({meta['origin']}), {meta['runs']} answers; "
        f"answers: {meta['answerer']}; scores: {meta['scores']}"
    )
    for name, table in r["tables"].items():
        kind = "PROXIES, not judge scores" if table["family"] == "proxy" else "LLM judge, 0-2"
        view = Table(title=f"{name} ({kind}); mean [95% bootstrap CI]")
        attributes = list(table["rows"][0]["attributes"]) if table["rows"] else []
        for column in ("strategy", "method", "k", *attributes, "avg"):
            view.add_column(column)
        for row in table["rows"]:
            cells = [
                "-" if s["mean"] is None else f"{s['mean']:.2f} [{s['ci_low']:.2f}, {s['ci_high']:.2f}]"
                for s in row["attributes"].values()
            ]
            average = "-" if row["average"] is None else f"{row['average']:.2f}"
            view.add_row(row["strategy"], row["label"], str(row["k"]), *cells, average)
        console.print(view)
    for name, counts in r["unparsed"].items():
        if any(counts.values()):  # never scored, never in a mean: shown so a judge that fails to answer is seen
            console.print(f"{name}: unparsed verdicts {', '.join(f'{a} {n}' for a, n in counts.items())}")
    empty = ", ".join(f"{e['method']}/{e['strategy']} {e['no_evidence']}" for e in r["no_evidence"])
    console.print(f"queries with no evidence: {empty}")
    console.print(f"report: {r['report']['html']}")


@app.command("querylog")
def eval_querylog(
    data: Path = typer.Option(
        ..., "--data", help="A NeoQA dataset folder (timelines.jsonl), e.g. from `ingest synthetic`."
    ),
    out: Path = typer.Option(..., "--out", help="Log file to write (.jsonl, or .csv); <out>.spikes.json beside it."),
    seed: int = typer.Option(0, "--seed", help="Same seed, same log."),
    entities: int = typer.Option(3, "--entities", min=1, help="Entities per timeline that get queries."),
    window: int | None = WINDOW,
    as_json: bool = JsonOption,
) -> None:
    """A synthetic query log for the NeoQA timelines, peaking on event days, with the spike days it must show."""
    from newskg.evaluation.neon.querylog import generate_log, spikes_path
    from newskg.evaluation.neoqa.dataset import DatasetError, load

    try:
        dataset = load(data)
    except DatasetError as exc:
        fail(str(exc))
    if not dataset.timelines:
        fail(f"no timelines.jsonl in {data}")
    known = generate_log(
        dataset.timelines, out, seed=seed, entities=entities, window=window or get_settings().neon_spike_window
    )
    result = {
        "log": str(out),
        "spikes": str(spikes_path(out)),
        "rows": known["rows"],
        "entities": len(known["entities"]),
        "dropped_queries": known["dropped_queries"],
    }
    emit(
        result,
        as_json,
        lambda r: console.print(
            f"{r['rows']} log rows for {r['entities']} entities in {r['log']} (known spikes: {r['spikes']}; "
            f"{r['dropped_queries']} long-tail queries the privacy rule must drop)"
        ),
    )
