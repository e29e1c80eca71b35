"""The rubric wording and the worked few-shot examples, read from the package's data files (so they can be
reviewed and changed without touching code; a change alters the prompt text and with it the cache key)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

from newskg.evaluation.neon.judges.inputs import ATTRIBUTES, Attribute, EvidenceItem, JudgeCase

DATA = files("newskg.evaluation.neon.judges") / "data"


@dataclass(frozen=True)
class Rubric:
    attribute: Attribute
    task: str
    quality: str
    uses_evidence: bool  # faithfulness only, as in NEON: the other two grade the answer against the query alone
    levels: tuple[tuple[int, str], ...]  # highest score first


@dataclass(frozen=True)
class Example:
    attribute: Attribute
    case: JudgeCase
    rating: int
    reason: str


@cache
def rubrics() -> dict[Attribute, Rubric]:
    data = json.loads((DATA / "rubrics.json").read_text(encoding="utf-8"))
    out: dict[Attribute, Rubric] = {}
    for attribute in ATTRIBUTES:
        spec = data["attributes"][attribute]
        levels = tuple(sorted(((int(k), str(v)) for k, v in spec["levels"].items()), reverse=True))
        out[attribute] = Rubric(attribute, data["task"], spec["quality"], bool(spec["uses_evidence"]), levels)
    return out


@cache
def examples() -> dict[Attribute, tuple[Example, ...]]:
    found: dict[Attribute, list[Example]] = {attribute: [] for attribute in ATTRIBUTES}
    for line in (DATA / "examples.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        evidence = tuple(EvidenceItem(e["text"], int(e["event_day"]), e["kind"]) for e in row["evidence"])
        case = JudgeCase(row["query"], int(row["day"]), row["answer"], evidence)
        attribute = _attribute(row["attribute"])
        found[attribute].append(Example(attribute, case, int(row["rating"]), row["reason"]))
    return {attribute: tuple(rows) for attribute, rows in found.items()}


def _attribute(name: str) -> Attribute:
    for attribute in ATTRIBUTES:
        if attribute == name:
            return attribute
    raise ValueError(f"unknown judge attribute in examples.jsonl: {name!r}")
