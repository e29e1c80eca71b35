"""One benchmark run: `run(config, clients)` loads the instances, chooses the answerer, answers every instance
(`answer_all`), scores the outcomes into summaries for the whole set and per instance set (main, ablation-0 …
ablation-80) and writes the report (JSON, HTML with plots)."""

from __future__ import annotations

import random
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from newskg.evaluation.kit.run import UNSEEN, Clients, Progress, Refused, mirror_or_none, refusing
from newskg.evaluation.neoqa.answerers import Answer, Answerer
from newskg.evaluation.neoqa.dataset import Dataset, DatasetError, evidence_articles, load
from newskg.evaluation.neoqa.metrics import Outcome, Summary, summarise
from newskg.evaluation.neoqa.records import Instance, Prediction, RunResult

AnswererName = Literal["evidence", "graph", "llm"]
InstanceSet = Literal["main", "ablation", "all"]
SAMPLE_SEED = 0  # the --limit sample: the same instances every time


class NeoQAConfig(BaseModel):
    instances: Path  # instances.jsonl (ours or the public release)
    answerer: AnswererName = "evidence"
    data: Path | None = None  # the folder holding articles.jsonl (or news.jsonl); default: the instances' folder
    instance_set: InstanceSet = "main"
    limit: int | None = None  # a seeded random sample of this many instances
    out: Path | None = None  # report folder (default: <data dir>/eval/neoqa-<answerer>)
    max_documents: int = 4  # llm: articles shown per question
    max_chars: int = 3000  # llm: characters of evidence per question


class NeoQAReport(BaseModel):
    answerer: AnswererName
    instance_set: InstanceSet = Field(serialization_alias="set")
    summary: Summary  # ADTScore, accuracy per category, parse rate: the whole chosen set
    by_set: dict[str, Summary]  # the same per instance set
    report: dict[str, str]  # the files written


def run(config: NeoQAConfig, clients: Clients, progress: Progress = UNSEEN) -> NeoQAReport:
    """Multiple-choice NeoQA: accuracy per category, parse rate, ADTScore; JSON + HTML report with plots."""
    from newskg.evaluation.neoqa.report import write_report

    with refusing(DatasetError):
        data = load(config.data or config.instances.parent, config.instances)
    chosen = _chosen(config, data)
    reader = _answerer(config, clients, progress)
    task = progress.task(f"answering ({config.answerer})", total=len(chosen))
    workers = 4 if config.answerer != "evidence" else 1
    result = answer_all(data, reader, chosen, workers=workers, on_done=task.advance)
    task.finish()
    folder = config.out or clients.settings.data_dir / "eval" / f"neoqa-{config.answerer}"
    paths = write_report(result, folder, "NeoQA")
    return NeoQAReport(
        answerer=config.answerer,
        instance_set=config.instance_set,
        summary=result.summary,
        by_set=result.by_set,
        report={k: str(v) for k, v in paths.items()},
    )


def _chosen(config: NeoQAConfig, data: Dataset) -> list[Instance]:
    wanted = config.instance_set
    chosen = [i for i in data.instances if wanted == "all" or i.instance_set.startswith(wanted)]
    if config.limit and len(chosen) > config.limit:
        chosen = random.Random(SAMPLE_SEED).sample(chosen, config.limit)
    if not chosen:
        raise Refused(f"no instances in set {wanted!r} of {config.instances}")
    return chosen


def _answerer(config: NeoQAConfig, clients: Clients, progress: Progress) -> Answerer:
    from newskg.evaluation.neoqa.answerers import EvidenceAnswerer, GraphAnswerer, LLMAnswerer

    if config.answerer == "evidence":
        return EvidenceAnswerer()
    if config.answerer == "graph":
        mirror = mirror_or_none(clients, progress) if clients.settings.mirror_enabled else None
        return GraphAnswerer(clients.store(ensure_schema=False), mirror)
    client = clients.llm()
    if client is None:
        raise Refused("--answerer llm needs an LLM: set NEWSKG_LLM_BASE_URL or run `newskg services up --llm`")
    return LLMAnswerer(client, config.max_documents, config.max_chars)


def answer_all(
    data: Dataset,
    answerer: Answerer,
    instances: list[Instance] | None = None,
    workers: int = 1,
    on_done: Callable[[], None] | None = None,
) -> RunResult:
    index = data.article_index()
    chosen = instances if instances is not None else data.instances

    def one(instance: Instance) -> tuple[Instance, Answer]:
        answer = answerer.answer(instance, evidence_articles(instance, index))
        if on_done:
            on_done()
        return instance, answer

    with ThreadPoolExecutor(max_workers=workers) as pool:
        answered = list(pool.map(one, chosen))
    outcomes: list[Outcome] = []
    predictions: list[Prediction] = []
    by_set: dict[str, list[Outcome]] = {}
    for instance, answer in answered:
        outcome = Outcome(
            instance.category,
            not instance.expects_deflection,
            answer.index == instance.gold_answer_idx,
            answer.index >= 0,
            instance.irrelevant_documents,
        )
        outcomes.append(outcome)
        by_set.setdefault(instance.instance_set, []).append(outcome)
        predictions.append(
            {
                "instance_id": instance.instance_id,
                "instance_set": instance.instance_set,
                "category": instance.category,
                "answerable": instance.answerable,
                "gold_answer_idx": instance.gold_answer_idx,
                "predicted_answer": answer.index,
                "correct": outcome.correct,
                "rationale": answer.rationale,
            }
        )
    return RunResult(
        answerer.name, summarise(outcomes), {name: summarise(o) for name, o in sorted(by_set.items())}, predictions
    )
