"""The dev (310 questions) and test (725) splits from the reference package's data files, and a system's answers
file, checked against a split before anything is scored."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from pydantic import TypeAdapter, ValidationError

from newskg.core.errors import NewskgError
from newskg.evaluation.fanoutqa.records import DevQuestion, Split, SystemAnswer, TestQuestion
from newskg.evaluation.fanoutqa.reference import data_file

_DEV = TypeAdapter(list[DevQuestion])
_TEST = TypeAdapter(list[TestQuestion])
_ANSWERS = TypeAdapter(list[SystemAnswer])


class AnswersError(NewskgError, ValueError):
    """An answers file that cannot be scored: missing, not JSON, not `[{"id", "answer"}]`, duplicate or unknown
    ids. Nothing is scored from a file that fails."""

    REASON = "fanoutqa_bad_answers"


def load_dev(path: Path | None = None) -> list[DevQuestion]:
    return _DEV.validate_json((path or data_file("dev")).read_bytes())


def load_test(path: Path | None = None) -> list[TestQuestion]:
    return _TEST.validate_json((path or data_file("test")).read_bytes())


def load_split(split: Split) -> list[DevQuestion] | list[TestQuestion]:
    return load_dev() if split == "dev" else load_test()


def load_answers(path: Path) -> list[SystemAnswer]:
    """The leaderboard's answers file: a JSON list of `{"id": ..., "answer": ...}` objects."""
    if not path.is_file():
        raise AnswersError(f"answers file not found: {path}", reason="fanoutqa_answers_missing")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise AnswersError(f"{path} is not JSON: {exc}", reason="fanoutqa_answers_not_json") from exc
    if not isinstance(data, list):
        raise AnswersError(f'{path}: expected a JSON list of {{"id", "answer"}} objects, got {type(data).__name__}')
    try:
        answers = _ANSWERS.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise AnswersError(
            f'{path}: entry {where}: {first["msg"]} ({exc.error_count()} problem(s); each entry is {{"id": str, '
            f'"answer": str | number | bool | list | dict}})'
        ) from exc
    duplicates = sorted(i for i, n in Counter(a.id for a in answers).items() if n > 1)
    if duplicates:
        raise AnswersError(f"{path}: duplicate ids {_some(duplicates)}", reason="fanoutqa_duplicate_ids")
    return answers


def check_ids(answers: list[SystemAnswer], questions: list[DevQuestion] | list[TestQuestion], split: Split) -> None:
    """Every answered id must be a question of the split (a typo or the wrong split otherwise scores silently
    low). Questions without an answer are allowed: they score 0, as in the reference."""
    known = {q.id for q in questions}
    unknown = sorted(a.id for a in answers if a.id not in known)
    if unknown:
        raise AnswersError(
            f"{len(unknown)} answer id(s) are not {split} questions: {_some(unknown)}", reason="fanoutqa_unknown_ids"
        )


def _some(ids: list[str], n: int = 5) -> str:
    return ", ".join(ids[:n]) + (f" … (+{len(ids) - n})" if len(ids) > n else "")
