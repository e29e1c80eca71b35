"""The offline generator end to end: N seeded timelines → articles → questions → instances. Same seed, same
bytes: every random choice comes from one `random.Random(seed)` per timeline."""

from __future__ import annotations

import random
from collections.abc import Callable

from newskg.core.records import RawArticle
from newskg.evaluation.kit.sources import SYNTHETIC_PREFIX
from newskg.evaluation.neoqa.articles import write_articles
from newskg.evaluation.neoqa.dataset import Dataset
from newskg.evaluation.neoqa.instances import build_instances
from newskg.evaluation.neoqa.questions import write_questions
from newskg.evaluation.neoqa.records import NewsArticle, plain
from newskg.evaluation.neoqa.timeline import build_timeline


def generate(
    timelines: int, seed: int, events: int = 10, ablation: bool = True, on_timeline: Callable[[int], None] | None = None
) -> Dataset:
    data = Dataset()
    for index in range(timelines):
        rng = random.Random(f"{seed}:{index}")
        world = build_timeline(rng, index, events=events)
        articles = write_articles(rng, world)
        questions = write_questions(rng, world)
        data.timelines.append(world.timeline)
        data.articles.extend(articles)
        data.questions.extend(questions)
        data.instances.extend(build_instances(rng, questions, articles, ablation=ablation))
        if on_timeline:
            on_timeline(index)
    return data


def article_url(article: NewsArticle) -> str:
    """Where a synthetic article says it lives: a reserved domain (RFC 2606), so it can never be fetched."""
    return f"{SYNTHETIC_PREFIX}{article.timeline_id.replace(':', '/')}/{article.article_id}"


def raw_article(article: NewsArticle, fetched_at: str) -> RawArticle:
    """The article as the stream carries it: backfilled at its fictional date, the headline as its title."""
    return RawArticle(
        text=article.body(),
        title=plain(article.headline),
        url=article_url(article),
        source=article.news_profile,
        published=article.date,
        fetched_at=fetched_at,
        backfill=True,
    )
