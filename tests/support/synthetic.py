"""A graph built from one fictional NeoQA timeline streamed through the real pipeline (Kafka, process, extract),
in its own isolation: what the evaluation tests generate their questions from."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NamedTuple

from newskg.core.settings import Settings
from newskg.evaluation.neoqa.records import NewsArticle
from tests.support.cli import LocalStack, newskg_json
from tests.support.isolation import Isolation


class SyntheticWorld(NamedTuple):
    env: dict[str, str]
    settings: Settings
    folder: Path
    days: list[str]  # the articles' publication days, ISO, oldest first


@contextmanager
def synthetic_world(stack: LocalStack, folder: Path, seed: int, events: int = 6) -> Iterator[SyntheticWorld]:
    with Isolation(stack, folder) as isolation:
        isolated = isolation.new()
        out = folder / "neoqa"
        newskg_json(
            "ingest", "synthetic", "--timelines", "1", "--seed", str(seed), "--events", str(events), "--out", str(out),
            env=isolated.env,
        )  # fmt: skip
        newskg_json("run", "all", "--until-idle", env=isolated.env)
        articles = (out / "articles.jsonl").read_text().splitlines()
        days = sorted({NewsArticle.model_validate_json(line).date for line in articles})
        yield SyntheticWorld(isolated.env, isolated.settings, folder, days)
