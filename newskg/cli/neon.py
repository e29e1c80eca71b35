"""`newskg eval spikes`, `newskg eval replay` and `newskg eval querylog`: NEON §3–4 over our own graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from core.settings import Settings, get_settings
from core.timeaxes import day_iso
from newskg.cli.app import eval_app
from newskg.cli.output import JsonOption, console, emit, fail
from newskg.wiring import NotConfigured, Wiring

if TYPE_CHECKING:  # imported lazily at run time: the CLI starts fast
    from evaluation.neon.spikes import SpikeRule
    from graph.store.store import GraphStore

LOG = typer.Option(None, "--log", help="Query log: CSV (header timestamp,query[,user_id][,count]) or JSONL.")
FROM_GRAPH = typer.Option(False, "--from-graph", help="No log: news-side spikes from the graph's daily mentions.")
ENTITY = typer.Option(None, "--entity", help="Only this entity (a name, resolved as the QA layer does).")
TOP = typer.Option(20, "--top", min=1, help="--from-graph without --entity: the entities with most interactions.")
WINDOW = typer.Option(None, "--window", min=1, help="Rolling-sum days (default NEWSKG_NEON_SPIKE_WINDOW, 3).")
SIGMA = typer.Option(None, "--sigma", min=0.0, help="σ multiplier (default NEWSKG_NEON_SPIKE_SIGMA, 1).")
MIN_USERS = typer.Option(None, "--min-users", min=1, help="Privacy rule (default NEWSKG_NEON_MIN_USERS, 5).")


def _progress(quiet: bool) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=True,
        disable=quiet,
    )


def _csv(value: str, option: str, allowed: tuple[str, ...] | None = None) -> list[str]:
    items = [v.strip().lower() for v in value.split(",") if v.strip()]
    if not items:
        fail(f"{option} needs at least one value")
    bad = [v for v in items if allowed is not None and v not in allowed]
    if bad:
        fail(f"{option}: {', '.join(bad)} not among {', '.join(allowed or ())}")
    return list(dict.fromkeys(items))


class SpikeInputs:
    """What `spikes` and `replay` share: the spike series, and (with a log) the linked log and its summary."""

    def __init__(self, spikes, linked, log_summary, origin: str):
        self.spikes, self.linked, self.log_summary, self.origin = spikes, linked, log_summary, origin


def _rule(settings: Settings, window: int | None, sigma: float | None) -> SpikeRule:
    from evaluation.neon.spikes import SpikeRule

    return SpikeRule(window or settings.neon_spike_window, settings.neon_spike_sigma if sigma is None else sigma)


def _check_source(log: Path | None, from_graph: bool) -> None:
    if (log is None) == (not from_graph):
        fail("give exactly one of --log FILE or --from-graph")
    if log is not None and not log.is_file():
        fail(f"query log {log} does not exist")
    if log is not None and log.stat().st_size == 0:
        fail(f"query log {log} is empty")


def _spike_inputs(settings, store, resolver, log, entity, top, rule, min_users, quiet) -> SpikeInputs:
    from evaluation.neon.linking import ResolverLinker, link_log, log_spikes
    from evaluation.neon.logs import QueryLogError, read_log

    wanted = _entity_id(resolver, entity) if entity else None
    if log is not None:
        with _progress(quiet) as progress:
            progress.add_task(f"reading {log.name}", total=None)
            try:
                parsed = read_log(log, min_users or settings.neon_min_users)
            except QueryLogError as exc:
                fail(str(exc))
        with _progress(quiet) as progress:
            task = progress.add_task("linking queries as of their day", total=len(parsed.daily))
            linked = link_log(parsed, ResolverLinker(resolver), on_item=lambda: progress.advance(task))
        spikes = [s for s in log_spikes(linked, rule) if wanted is None or s.entity_id == wanted]
        summary = parsed.summary() | {
            "unlinked_queries": linked.unlinked_queries,
            "unlinked_issues": linked.unlinked_issues,
        }
        return SpikeInputs(spikes, linked, summary, "query log")
    return SpikeInputs(_graph_series(store, wanted, top, rule, quiet), None, None, "news mentions")


def _entity_id(resolver, name: str) -> str:
    best, _ = resolver.resolve(name)
    if best is None:
        fail(f"no entity in the graph matches {name!r}")
    return best.id


def _graph_series(store: GraphStore, wanted: str | None, top: int, rule: SpikeRule, quiet: bool):
    from evaluation.neon.linking import graph_spikes
    from graph.store.mentions import daily_counts, day_range

    period = day_range(store.conn)
    if period is None:
        fail("the graph holds no mention counts yet: ingest and run the stages first")
    if wanted:
        entities = [(wanted, next((e.name for e in store.entities_as_of([wanted])), wanted))]
    else:
        entities = [(e.id, e.name) for e in store.top_entities(limit=top)]
    counts = {}
    with _progress(quiet) as progress:
        task = progress.add_task("daily mention counts", total=len(entities))
        for entity_id, name in entities:
            counts[entity_id] = (name, daily_counts(store.conn, entity_id, period[0], period[1]))
            progress.advance(task)
    return graph_spikes(counts, period[0], period[1], rule)


def _open_qa(wiring: Wiring):
    from newskg.pipeline import qa_service

    try:
        return qa_service(wiring)
    except NotConfigured as exc:
        fail(str(exc))
    except RuntimeError as exc:  # a local Qdrant folder held by another process
        fail(f"cannot open the graph's mirror: {exc}")


@eval_app.command("spikes")
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
    from evaluation.neon.report import write_spike_charts
    from qa.query import EntityResolver

    _check_source(log, from_graph)
    settings = get_settings()
    rule = _rule(settings, window, sigma)
    with Wiring(settings) as wiring:
        try:
            store = wiring.store()
        except NotConfigured as exc:
            fail(str(exc))
        inputs = _spike_inputs(settings, store, EntityResolver(store), log, entity, top, rule, min_users, as_json)
    folder = out or settings.data_dir / "eval" / "spikes"
    charts = write_spike_charts(inputs.spikes, folder, rule, inputs.origin)
    result = {
        "origin": inputs.origin,
        "rule": {"window": rule.window, "sigma": rule.sigma, "comparison": "rolling sum > mean + sigma * sample std"},
        "log": inputs.log_summary,
        "entities": [
            {
                "entity_id": s.entity_id,
                "name": s.name,
                "threshold": s.threshold,
                "spike_days": [day_iso(d) for d in s.spikes],
                "chart": str(chart),
            }
            for s, chart in zip(inputs.spikes, charts, strict=True)
        ],
    }
    # The explorer's timeline shows these days (NEWSKG_EXPLORE_SPIKES_FILE; by default the default folder's file).
    spikes_file = folder / "spikes.json"
    folder.mkdir(parents=True, exist_ok=True)
    result["file"] = str(spikes_file)
    spikes_file.write_text(json.dumps(result, indent=1), encoding="utf-8")
    emit(result, as_json, _render_spikes)


def _render_spikes(r: dict) -> None:
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


@eval_app.command("replay")
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
    from evaluation.neon.methods import METHODS, STRATEGIES
    from evaluation.neon.replay import Replayer, ReplayPlan, choose, graph_queries, log_queries
    from evaluation.neon.report import write_report
    from evaluation.neon.scoring import ProxyScorer, scorers

    _check_source(log, from_graph)
    chosen_methods = _csv(methods, "--methods", tuple(METHODS))
    chosen_strategies = _csv(strategies, "--strategies", STRATEGIES)
    try:
        chosen_ks = sorted({int(k) for k in _csv(ks, "--k")})
    except ValueError:
        fail(f"--k must be comma-separated whole numbers, not {ks!r}")
    if min(chosen_ks) < 1:
        fail("--k values must be at least 1")
    if scores not in ("auto", "judges", "proxies"):
        fail(f"--scores must be auto, judges or proxies, not {scores!r}")
    settings = get_settings()
    rule = _rule(settings, window, sigma)
    with Wiring(settings) as wiring:
        service = _open_qa(wiring)
        judge_llm = None if scores == "proxies" else wiring.llm()
        if scores == "judges" and judge_llm is None:
            fail("--scores judges needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
        chosen_scorers = scorers(judge_llm) if judge_llm is not None else [ProxyScorer()]
        inputs = _spike_inputs(settings, service.store, service.resolver, log, entity, top, rule, min_users, as_json)
        candidates = log_queries(inputs.spikes, inputs.linked) if inputs.linked else graph_queries(inputs.spikes)
        queries = choose(candidates, limit, seed)
        if not queries:
            fail(f"no spike days with queries ({inputs.origin}): nothing to replay")
        plan = ReplayPlan([METHODS[m] for m in chosen_methods], chosen_strategies, chosen_ks)
        replayer = Replayer(service.resolver, service.retriever, service.llm, chosen_scorers)
        with _progress(as_json) as progress:
            task = progress.add_task("replaying as of each spike day", total=len(queries) * plan.runs_per_query)
            records = replayer.replay(queries, plan, on_run=lambda: progress.advance(task))
        answerer = f"LLM ({settings.llm_model})" if service.llm else "extractive (offline)"
    meta = {
        "origin": inputs.origin,
        "rule": {"window": rule.window, "sigma": rule.sigma},
        "log": inputs.log_summary,
        "unlinked_queries": inputs.log_summary["unlinked_queries"] if inputs.log_summary else 0,
        "queries": len(queries),
        "candidate_queries": len(candidates),
        "spike_days": len({(q.entity_id, q.day) for q in queries}),
        "methods": chosen_methods,
        "strategies": chosen_strategies,
        "ks": chosen_ks,
        "method_default_k": {m: METHODS[m].default_k for m in chosen_methods},
        "runs": len(records),
        "answerer": answerer,
        "scores": ", ".join(s.name for s in chosen_scorers),
        "score_family": chosen_scorers[0].family,
        "knowledge": "ingested: published and ingested by the end of the replay day",
        "seed": seed,
    }
    paths = write_report(
        out, records, chosen_scorers, inputs.spikes, meta, chosen_methods, chosen_strategies, chosen_ks
    )
    from evaluation.neon.report import aggregate

    summary = aggregate(records, chosen_scorers, chosen_methods, chosen_strategies, chosen_ks)
    emit(
        {
            "meta": meta,
            "tables": summary["tables"],
            "unparsed": summary["unparsed"],
            "no_evidence": summary["no_evidence"],
            "report": {k: str(v) for k, v in paths.items()},
        },
        as_json,
        _render_replay,
    )


def _render_replay(r: dict) -> None:
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


@eval_app.command("querylog")
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
    from evaluation.neon.querylog import generate_log, spikes_path
    from evaluation.neoqa.dataset import DatasetError, load

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
