"""One benchmark run: every instance through an answerer (with a progress bar), outcomes scored, summaries for
the whole set and per instance set (main, ablation-0 … ablation-80)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from evaluation.neoqa.answerers import Answer, Answerer
from evaluation.neoqa.dataset import Dataset, evidence_articles
from evaluation.neoqa.metrics import Outcome, summarise
from evaluation.neoqa.records import Instance


@dataclass
class RunResult:
    answerer: str
    summary: dict
    by_set: dict[str, dict]
    predictions: list[dict] = field(default_factory=list)


def run(
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
    outcomes, predictions, by_set = [], [], {}
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
