"""LLM mode end to end: the paper's step sequence through the project's LLM client, into the same records (and
the same instance builder) as the offline generator. Any step that stays invalid after its critique stops the
run with `LLMGenerationError` naming the step; questions are the exception: a pair of events whose question
fails a check simply yields none, as the paper's filters drop such drafts."""

from __future__ import annotations

import random
from collections.abc import Callable

from newskg.core.llm.client import LLMClient
from newskg.evaluation.neoqa.dataset import Dataset
from newskg.evaluation.neoqa.instances import build_instances
from newskg.evaluation.neoqa.llm_articles import write_llm_articles
from newskg.evaluation.neoqa.llm_questions import write_llm_questions
from newskg.evaluation.neoqa.llm_steps import LLMGenerationError
from newskg.evaluation.neoqa.llm_timeline import LLMTimelineConfig, build_llm_timeline

__all__ = ["LLMGenerationError", "generate_with_llm"]


def generate_with_llm(
    client: LLMClient,
    timelines: int,
    seed: int,
    config: LLMTimelineConfig = LLMTimelineConfig(),
    per_profile: int = 3,
    question_pairs: int = 20,
    on_timeline: Callable[[int], None] | None = None,
) -> Dataset:
    """`timelines` timelines shaped by `config`, `per_profile` articles per newspaper profile (subsets of each
    event's items), questions over at most `question_pairs` pairs of events."""
    data = Dataset()
    for index in range(timelines):
        rng = random.Random(f"llm:{seed}:{index}")
        timeline = build_llm_timeline(client, rng, index, config)
        articles = write_llm_articles(client, timeline, per_profile)
        questions = write_llm_questions(client, rng, timeline, question_pairs)
        data.timelines.append(timeline)
        data.articles.extend(articles)
        data.questions.extend(questions)
        data.instances.extend(build_instances(rng, questions, articles))
        if on_timeline:
            on_timeline(index)
    return data
