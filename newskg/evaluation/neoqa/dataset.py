"""The dataset on disk: `timelines.jsonl`, `articles.jsonl`, `questions.jsonl`, `instances.jsonl`, one record per
line. The loader also reads the public NeoQA release as downloaded: its articles file may be `news.jsonl`,
instances may lack `gold_answer_idx` (options are then shuffled here, "Unanswerable" last), and evidence may be
article ids or whole articles."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeGuard, TypeVar

from pydantic import BaseModel, ValidationError

from newskg.core.errors import NewskgError
from newskg.evaluation.neoqa.instances import shuffled_options
from newskg.evaluation.neoqa.records import UNANSWERABLE, Instance, NewsArticle, Question, Timeline, normalise_category

M = TypeVar("M", bound=BaseModel)
JsonObject = dict[str, Any]  # one JSON line as parsed, before its model validates it

FILES = {
    "timelines": "timelines.jsonl",
    "articles": "articles.jsonl",
    "questions": "questions.jsonl",
    "instances": "instances.jsonl",
}


class DatasetError(NewskgError, ValueError):
    """A file that is not a NeoQA file: which one, which line, what is wrong."""

    REASON = "invalid_dataset"


@dataclass
class Dataset:
    timelines: list[Timeline] = field(default_factory=list[Timeline])
    articles: list[NewsArticle] = field(default_factory=list[NewsArticle])
    questions: list[Question] = field(default_factory=list[Question])
    instances: list[Instance] = field(default_factory=list[Instance])

    def write(self, folder: Path) -> dict[str, Path]:
        folder.mkdir(parents=True, exist_ok=True)
        written: dict[str, Path] = {}
        for part, name in FILES.items():
            path = folder / name
            _write_jsonl(path, getattr(self, part))
            written[part] = path
        return written

    def article_index(self) -> dict[str, NewsArticle]:
        return {a.article_id: a for a in self.articles}


def _write_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for record in records:
            out.write(record.model_dump_json(by_alias=True, exclude_none=False) + "\n")


def read_jsonl(path: Path, model: type[M]) -> Iterator[M]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield model.model_validate(_normalised(json.loads(line)))
            except (json.JSONDecodeError, ValidationError) as exc:
                raise DatasetError(f"{path}:{number}: not a {model.__name__}: {exc}") from exc


def _is_object(value: object) -> TypeGuard[JsonObject]:
    return isinstance(value, dict)


def _normalised(obj: object) -> object:
    if _is_object(obj) and "category" in obj:
        obj["category"] = normalise_category(obj["category"])
    if _is_object(obj) and "question" in obj and "gold_answer_idx" not in obj and "answerable" in obj:
        obj = _with_gold(obj)
    return obj


def _with_gold(obj: JsonObject) -> JsonObject:
    """The downloaded release leaves the option order to the loader: shuffle per instance, deterministically."""
    question = Question.model_validate({k: v for k, v in obj.items() if k in Question.model_fields})
    options = obj.get("answer_options") or shuffled_options(question, obj.get("instance_id", question.question_id))
    gold = UNANSWERABLE if obj["answerable"] != "answerable-sufficient" else obj["answer"]
    return {**obj, "answer_options": options, "gold_answer_idx": options.index(gold)}


def load(folder: Path, instances: Path | None = None) -> Dataset:
    """Everything present under `folder`; `instances` may point elsewhere (a filtered or custom set)."""
    data = Dataset()
    if (folder / FILES["timelines"]).exists():
        data.timelines = list(read_jsonl(folder / FILES["timelines"], Timeline))
    for name in (FILES["articles"], "news.jsonl"):
        if (folder / name).exists():
            data.articles = list(read_jsonl(folder / name, NewsArticle))
            break
    if (folder / FILES["questions"]).exists():
        data.questions = list(read_jsonl(folder / FILES["questions"], Question))
    source = instances or folder / FILES["instances"]
    if source.exists():
        data.instances = list(read_jsonl(source, Instance))
    return data


def evidence_articles(instance: Instance, index: dict[str, NewsArticle]) -> list[NewsArticle]:
    """An instance's evidence as articles, whether it lists ids or carries the articles themselves."""
    found: list[NewsArticle] = []
    for doc in instance.use_evidence_documents:
        if isinstance(doc, NewsArticle):
            found.append(doc)
        elif doc in index:
            found.append(index[doc])
        else:
            raise DatasetError(f"instance {instance.instance_id}: evidence article {doc!r} is not in the articles")
    return found
