"""Questions combined with evidence (NeoQA appendix E), decided by each article's `used_items`:

- main (E.2): every article of the timeline published up to the question date. Sufficient when their items
  cover the question's evidence; for each required item, an insufficient instance without every article that
  holds it; each multi-hop question's false-premise and uncertain-specificity variants get its sufficient
  evidence. Related instances keep the same article order.
- ablation (E.3): exactly two required articles plus 0/20/40/60/80 irrelevant ones (each set inside the next),
  when 80 irrelevant past articles exist; insufficient by dropping either required article; the variants reuse
  the sufficient evidence.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Iterable

from newskg.evaluation.neoqa.records import UNANSWERABLE, Answerability, Instance, NewsArticle, Question

ABLATION_STEPS = (0, 20, 40, 60, 80)


def sufficient_combinations(question: Question, articles: list[NewsArticle], limit: int = 50) -> list[list[str]]:
    """Minimal sets of one or two articles that together hold every evidence item."""
    need = set(question.evidence_ids)
    holders = [a for a in articles if need & set(a.used_items)]
    singles = [[a.article_id] for a in holders if need <= set(a.used_items)]
    pairs = [
        [a.article_id, b.article_id]
        for a, b in itertools.combinations(holders, 2)
        if need <= set(a.used_items) | set(b.used_items)
        and not need <= set(a.used_items)
        and not need <= set(b.used_items)
    ]
    return (singles + pairs)[:limit]


def build_instances(
    rng: random.Random, questions: list[Question], articles: list[NewsArticle], ablation: bool = True
) -> list[Instance]:
    by_timeline: dict[str, list[NewsArticle]] = {}
    for article in articles:
        by_timeline.setdefault(article.timeline_id, []).append(article)
    children: dict[str, list[Question]] = {}
    for q in questions:
        if q.parent_question_id:
            children.setdefault(q.parent_question_id, []).append(q)
    instances: list[Instance] = []
    for q in questions:
        if q.parent_question_id:
            continue
        past = [a for a in by_timeline.get(q.timeline_id, []) if a.created_at <= q.created_at]
        q.all_sufficient_article_id_combinations = sufficient_combinations(q, past)
        q.sufficient_article_ids = (q.all_sufficient_article_id_combinations or [[]])[-1]
        family = children.get(q.question_id, [])
        instances.extend(_main(rng, q, family, past))
        if ablation:
            instances.extend(_ablation(rng, q, family, past))
    return instances


def _main(rng: random.Random, q: Question, family: list[Question], past: list[NewsArticle]) -> list[Instance]:
    if not set(q.evidence_ids) <= {item for a in past for item in a.used_items}:
        return []  # the articles never carried all the evidence: no sufficient instance, so none at all
    order = rng.sample(past, len(past))
    made = [_instance(q, "answerable-sufficient", order, "main")]
    seen: set[tuple[str, ...]] = set()
    for item in q.evidence_ids:
        kept = [a for a in order if item not in a.used_items]
        key = tuple(a.article_id for a in kept)
        if key not in seen:
            seen.add(key)
            made.append(_instance(q, "answerable-insufficient", kept, "main", removed=item))
    made.extend(_instance(child, "unanswerable", order, "main") for child in family)
    return made


def _ablation(rng: random.Random, q: Question, family: list[Question], past: list[NewsArticle]) -> list[Instance]:
    need = set(q.evidence_ids)
    pairs = [c for c in q.all_sufficient_article_id_combinations if len(c) == 2]
    irrelevant = [a for a in past if not need & set(a.used_items)]
    if not pairs or len(irrelevant) < ABLATION_STEPS[-1]:
        return []
    by_id = {a.article_id: a for a in past}
    required = [by_id[i] for i in rng.choice(pairs)]
    pool = rng.sample(irrelevant, ABLATION_STEPS[-1])
    made: list[Instance] = []
    for n in ABLATION_STEPS:
        chosen = set(id(a) for a in [*required, *pool[:n]])
        order = [a for a in _stable_order(q, [*required, *pool]) if id(a) in chosen]
        made.append(_instance(q, "answerable-sufficient", order, f"ablation-{n}", irrelevant=n))
        for dropped in required:
            made.append(
                _instance(
                    q,
                    "answerable-insufficient",
                    [a for a in order if a is not dropped],
                    f"ablation-{n}",
                    irrelevant=n,
                    removed=next(i for i in q.evidence_ids if i in dropped.used_items),
                )
            )
        made.extend(_instance(c, "unanswerable", order, f"ablation-{n}", irrelevant=n) for c in family)
    return made


def _stable_order(q: Question, articles: list[NewsArticle]) -> list[NewsArticle]:
    """One shuffled order per question family, so every ablation step shows the shared articles alike."""
    return random.Random(q.question_id).sample(articles, len(articles))


def _instance(
    q: Question,
    answerable: Answerability,
    docs: Iterable[NewsArticle],
    instance_set: str,
    irrelevant: int | None = None,
    removed: str | None = None,
) -> Instance:
    ids = [a.article_id for a in docs]
    instance_id = hashlib.sha256("\x1f".join([q.question_id, answerable, instance_set, *ids]).encode()).hexdigest()
    options = shuffled_options(q, instance_id)
    gold = UNANSWERABLE if answerable != "answerable-sufficient" else q.answer
    return Instance(
        **q.model_dump(by_alias=True, exclude={"answer_options"}),
        removed_evidence=removed,
        answer_options=options,
        instance_id=instance_id[:32],
        answerable=answerable,
        use_evidence_documents=list[str | NewsArticle](ids),
        gold_answer_idx=options.index(gold),
        instance_set=instance_set,
        irrelevant_documents=irrelevant,
    )


def shuffled_options(q: Question, seed: str) -> list[str]:
    """The answer and distractors in a per-instance order; "Unanswerable" always last, as in the release."""
    options = [q.answer, *(d.answer for d in q.distractors)]
    return [*random.Random(seed).sample(options, len(options)), UNANSWERABLE]
