"""NEON §3–4 over our own graph as two runs: `run_spikes` finds each entity's spike days (from a query log, or
from the graph's daily mention counts) and charts them; `run` replays every query of every spike day as of that
day, by every method × strategy × k, scores the answers (LLM judges, else proxies: never mixed) and writes the
report. Both take a typed config and the clients they borrow (evaluation/kit/run.py) and return a typed report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from newskg.core.errors import NewskgError
from newskg.core.settings import Settings
from newskg.core.spikes import SpikeRule, SpikeSeries
from newskg.core.timeaxes import day_iso
from newskg.evaluation.kit.run import UNSEEN, Clients, Progress, Refused, refusing
from newskg.evaluation.neon.linking import LinkedLog, ResolverLinker, graph_spikes, link_log, log_spikes
from newskg.evaluation.neon.logs import QueryLogError, read_log
from newskg.evaluation.neon.methods import METHODS, STRATEGIES, NeonStrategy
from newskg.evaluation.neon.replay import (
    Replayer,
    ReplayPlan,
    ReplayQuery,
    ReplayRecord,
    choose,
    graph_queries,
    log_queries,
)
from newskg.evaluation.neon.scoring import ProxyScorer, Scorer, scorers
from newskg.graph.store.store import GraphStore
from newskg.qa.query import EntityResolver
from newskg.qa.retrieve import Method
from newskg.qa.service import QAService

COMPARISON = "rolling sum > mean + sigma * sample std"
NEEDS_LLM = "--scores judges needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`"


class SpikeSource(BaseModel):
    """Where the spike series come from, and the rule that finds spike days in them."""

    log: Path | None = None  # a query log (CSV or JSONL); None: the graph's daily mention counts
    entity: str | None = None  # only this entity (a name, resolved as the QA layer does)
    top: int = 20  # from the graph without `entity`: the entities with most interactions
    window: int | None = None  # rolling-sum days (default NEWSKG_NEON_SPIKE_WINDOW)
    sigma: float | None = None  # σ multiplier (default NEWSKG_NEON_SPIKE_SIGMA)
    min_users: int | None = None  # privacy rule (default NEWSKG_NEON_MIN_USERS)

    def rule(self, settings: Settings) -> SpikeRule:
        sigma = settings.neon_spike_sigma if self.sigma is None else self.sigma
        return SpikeRule(self.window or settings.neon_spike_window, sigma)


class SpikesConfig(SpikeSource):
    out: Path | None = None  # folder for the PNGs and spikes.json (default <data dir>/eval/spikes)


class ReplayConfig(SpikeSource):
    out: Path  # report folder (report.json, report.html, PNGs)
    methods: list[Method] = ["newsrag", "m0", "m1", "m2"]
    strategies: list[NeonStrategy] = list(STRATEGIES)
    ks: list[int] = [1, 3, 5, 10, 20]
    limit: int | None = None  # a seeded sample of this many queries
    scores: Literal["auto", "judges", "proxies"] = "auto"  # auto: judges with an LLM, else proxies
    seed: int = 0  # of the sample (the bootstrap's intervals always use report.BOOTSTRAP_SEED)


class RuleFigures(BaseModel):
    window: int
    sigma: float


class SpikeRuleFigures(RuleFigures):
    comparison: str = COMPARISON


class EntitySpikes(BaseModel):
    entity_id: str
    name: str
    threshold: float | None
    spike_days: list[str]
    chart: str


class SpikesReport(BaseModel):
    origin: str  # query log | news mentions
    rule: SpikeRuleFigures
    log: dict[str, Any] | None  # the log's summary (rows, malformed, privacy rule, unlinked queries)
    entities: list[EntitySpikes]
    file: str  # spikes.json: the explorer's timeline shows these days (NEWSKG_EXPLORE_SPIKES_FILE)


class ReplayMeta(BaseModel):
    """What the report's header says about the run (report.json "meta")."""

    origin: str
    rule: RuleFigures
    log: dict[str, Any] | None
    unlinked_queries: int
    queries: int
    candidate_queries: int
    spike_days: int
    methods: list[str]
    strategies: list[str]
    ks: list[int]
    method_default_k: dict[str, int]
    runs: int
    answerer: str
    scores: str
    score_family: str
    knowledge: str = "ingested: published and ingested by the end of the replay day"
    seed: int


class ReplayReport(BaseModel):
    meta: ReplayMeta
    tables: dict[str, Any]  # per scorer: mean [95% bootstrap CI] per strategy × method × k
    unparsed: dict[str, dict[str, int]]  # per scorer and attribute: verdicts the judge gave in no readable form
    no_evidence: list[dict[str, Any]]
    report: dict[str, str]  # the files written


@dataclass
class SpikeInputs:
    """What both runs share: the spike series, and (with a log) the linked log and its summary."""

    spikes: list[SpikeSeries]
    rule: SpikeRule
    linked: LinkedLog | None
    log_summary: dict[str, Any] | None
    origin: str


def run_spikes(config: SpikesConfig, clients: Clients, progress: Progress = UNSEEN) -> SpikesReport:
    """Spike days per entity, a chart each, and spikes.json for the explorer."""
    from newskg.evaluation.neon.report import write_spike_charts

    check_log(config.log)
    inputs = spike_inputs(config, clients.settings, clients.resolver(), progress)
    rule = inputs.rule
    folder = config.out or clients.settings.data_dir / "eval" / "spikes"
    charts = write_spike_charts(inputs.spikes, folder, rule, inputs.origin)
    entities = [
        EntitySpikes(
            entity_id=s.entity_id,
            name=s.name,
            threshold=s.threshold,
            spike_days=[day_iso(d) for d in s.spikes],
            chart=str(chart),
        )
        for s, chart in zip(inputs.spikes, charts, strict=True)
    ]
    spikes_file = folder / "spikes.json"
    report = SpikesReport(
        origin=inputs.origin,
        rule=SpikeRuleFigures(window=rule.window, sigma=rule.sigma),
        log=inputs.log_summary,
        entities=entities,
        file=str(spikes_file),
    )
    folder.mkdir(parents=True, exist_ok=True)
    spikes_file.write_text(json.dumps(report.model_dump(), indent=1), encoding="utf-8")
    return report


def run(config: ReplayConfig, clients: Clients, progress: Progress = UNSEEN) -> ReplayReport:
    """Answer every query of every spike day as of that day, by every method × strategy × k; score; report."""
    from newskg.evaluation.neon.report import Grid, write_report

    check_log(config.log)
    service = _qa_service(clients)
    chosen_scorers = _scorers(config, clients)
    inputs = spike_inputs(config, clients.settings, service.resolver, progress)
    candidates = log_queries(inputs.spikes, inputs.linked) if inputs.linked else graph_queries(inputs.spikes)
    queries = choose(candidates, config.limit, config.seed)
    if not queries:
        raise Refused(f"no spike days with queries ({inputs.origin}): nothing to replay")
    records = _replay(config, service, chosen_scorers, queries, progress)
    answerer = f"LLM ({clients.settings.llm_model})" if service.llm else "extractive (offline)"
    meta = _meta(config, inputs, queries, len(candidates), len(records), answerer, chosen_scorers)
    grid = Grid(config.methods, config.strategies, config.ks)
    summary, paths = write_report(config.out, records, chosen_scorers, inputs.spikes, meta.model_dump(), grid)
    return ReplayReport(
        meta=meta,
        tables=summary["tables"],
        unparsed=summary["unparsed"],
        no_evidence=[dict(row) for row in summary["no_evidence"]],  # the model's field is a plain JSON object
        report={k: str(v) for k, v in paths.items()},
    )


def check_log(log: Path | None) -> None:
    if log is not None and not log.is_file():
        raise Refused(f"query log {log} does not exist")
    if log is not None and log.stat().st_size == 0:
        raise Refused(f"query log {log} is empty")


def _qa_service(clients: Clients) -> QAService:
    try:
        return clients.qa_service()
    except NewskgError:
        raise  # not configured: its message names the fix
    except RuntimeError as exc:  # a local Qdrant folder held by another process
        raise Refused(f"cannot open the graph's mirror: {exc}") from exc


def _scorers(config: ReplayConfig, clients: Clients) -> list[Scorer]:
    """The judges when an LLM is there (and wanted), else the proxies: one family per run."""
    judge_llm = None if config.scores == "proxies" else clients.llm()
    if config.scores == "judges" and judge_llm is None:
        raise Refused(NEEDS_LLM)
    return scorers(judge_llm) if judge_llm is not None else [ProxyScorer()]


def _replay(
    config: ReplayConfig, service: QAService, chosen: list[Scorer], queries: list[ReplayQuery], progress: Progress
) -> list[ReplayRecord]:
    plan = ReplayPlan([METHODS[m] for m in config.methods], config.strategies, config.ks)
    replayer = Replayer(service.resolver, service.retriever, service.llm, chosen)
    task = progress.task("replaying as of each spike day", total=len(queries) * plan.runs_per_query)
    records = replayer.replay(queries, plan, on_run=task.advance)
    task.finish()
    return records


def _meta(
    config: ReplayConfig,
    inputs: SpikeInputs,
    queries: list[ReplayQuery],
    candidates: int,
    runs: int,
    answerer: str,
    chosen: list[Scorer],
) -> ReplayMeta:
    return ReplayMeta(
        origin=inputs.origin,
        rule=RuleFigures(window=inputs.rule.window, sigma=inputs.rule.sigma),
        log=inputs.log_summary,
        unlinked_queries=inputs.log_summary["unlinked_queries"] if inputs.log_summary else 0,
        queries=len(queries),
        candidate_queries=candidates,
        spike_days=len({(q.entity_id, q.day) for q in queries}),
        methods=list(config.methods),
        strategies=list(config.strategies),
        ks=config.ks,
        method_default_k={m: METHODS[m].default_k for m in config.methods},
        runs=runs,
        answerer=answerer,
        scores=", ".join(s.name for s in chosen),
        score_family=chosen[0].family,
        seed=config.seed,
    )


def spike_inputs(source: SpikeSource, settings: Settings, resolver: EntityResolver, progress: Progress) -> SpikeInputs:
    rule = source.rule(settings)
    wanted = _entity_id(resolver, source.entity) if source.entity else None
    if source.log is None:
        spikes = _graph_series(resolver.store, wanted, source.top, rule, progress)
        return SpikeInputs(spikes, rule, None, None, "news mentions")
    task = progress.task(f"reading {source.log.name}")
    with refusing(QueryLogError):
        parsed = read_log(source.log, source.min_users or settings.neon_min_users)
    task.finish()
    task = progress.task("linking queries as of their day", total=len(parsed.daily))
    linked = link_log(parsed, ResolverLinker(resolver), on_item=task.advance)
    task.finish()
    spikes = [s for s in log_spikes(linked, rule) if wanted is None or s.entity_id == wanted]
    summary = parsed.summary() | {
        "unlinked_queries": linked.unlinked_queries,
        "unlinked_issues": linked.unlinked_issues,
    }
    return SpikeInputs(spikes, rule, linked, summary, "query log")


def _entity_id(resolver: EntityResolver, name: str) -> str:
    best, _ = resolver.resolve(name)
    if best is None:
        raise Refused(f"no entity in the graph matches {name!r}")
    return best.id


def _graph_series(
    store: GraphStore, wanted: str | None, top: int, rule: SpikeRule, progress: Progress
) -> list[SpikeSeries]:
    from newskg.graph.store.mentions import daily_counts, day_range

    period = day_range(store.conn)
    if period is None:
        raise Refused("the graph holds no mention counts yet: ingest and run the stages first")
    if wanted:
        entities = [(wanted, next((e.name for e in store.entities_as_of([wanted])), wanted))]
    else:
        entities = [(e.id, e.name) for e in store.top_entities(limit=top)]
    counts: dict[str, tuple[str, dict[int, int]]] = {}
    task = progress.task("daily mention counts", total=len(entities))
    for entity_id, name in entities:
        counts[entity_id] = (name, daily_counts(store.conn, entity_id, period[0], period[1]))
        task.advance()
    task.finish()
    return graph_spikes(counts, period[0], period[1], rule)
