"""NeoQA's metrics (§5, Table 4): accuracy per question category, split by whether the instance is answerable,
accuracy pooled over answerable (acc_a) and unanswerable (acc_u) instances, and ADTScore, their harmonic mean
(random guessing among 7 options: 14.3). Parse rate as in appendix F.7."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from typing_extensions import TypedDict  # pydantic (NeoQAReport) takes typing's TypedDict only from 3.12

# Table 4's columns: (answerable?, category)
COLUMNS = (
    ("answerable", "multi-hop"),
    ("answerable", "time-span"),
    ("unanswerable", "multi-hop"),
    ("unanswerable", "time-span"),
    ("unanswerable", "false-premise"),
    ("unanswerable", "uncertain-specificity"),
)


def adt_score(acc_answerable: float, acc_unanswerable: float) -> float:
    total = acc_answerable + acc_unanswerable
    return 2 * acc_answerable * acc_unanswerable / total if total else 0.0


def pooled(accuracies: dict[tuple[str, str], float], counts: dict[tuple[str, str], int], side: str) -> float:
    """Accuracy over all instances of one side, from per-column accuracies weighted by instance counts."""
    keys = [k for k in COLUMNS if k[0] == side and counts.get(k)]
    total = sum(counts[k] for k in keys)
    return sum(accuracies[k] * counts[k] for k in keys) / total if total else 0.0


def adt_from_columns(accuracies: dict[tuple[str, str], float], counts: dict[tuple[str, str], int]) -> float:
    return adt_score(pooled(accuracies, counts, "answerable"), pooled(accuracies, counts, "unanswerable"))


def _question_only(accuracy: dict[tuple[str, str], float], counts: dict[tuple[str, str], int]) -> float:
    """ADTScore without the insufficient-evidence columns, whose gold answer depends on articles being withheld.
    The graph answerer reads everything published by the question date, so for it only these columns are fair."""
    kept = {
        k: v for k, v in counts.items() if k[0] == "answerable" or k[1] in ("false-premise", "uncertain-specificity")
    }
    return adt_from_columns(accuracy, kept)


class Column(TypedDict):
    """One of Table 4's columns in a summary: its instances and accuracy (None when it has none)."""

    answerable: str
    category: str
    instances: int
    accuracy: float | None


class Summary(TypedDict):
    """The figures of one set of outcomes, as the report writes them."""

    instances: int
    acc_answerable: float
    acc_unanswerable: float
    adt_score: float
    adt_question_only: float
    parse_rate: float
    columns: list[Column]


@dataclass
class Outcome:
    category: str
    answerable: bool  # the instance expects an answer (not a deflection)
    correct: bool
    parsed: bool
    irrelevant_documents: int | None = None


def summarise(outcomes: list[Outcome]) -> Summary:
    hits: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for o in outcomes:
        hits[("answerable" if o.answerable else "unanswerable", o.category)].append(o.correct)
    counts = {k: len(v) for k, v in hits.items()}
    accuracy = {k: 100 * sum(v) / len(v) for k, v in hits.items() if v}
    acc_a, acc_u = pooled(accuracy, counts, "answerable"), pooled(accuracy, counts, "unanswerable")
    return {
        "instances": len(outcomes),
        "acc_answerable": acc_a,
        "acc_unanswerable": acc_u,
        "adt_score": adt_score(acc_a, acc_u),
        "adt_question_only": _question_only(accuracy, counts),
        "parse_rate": 100 * sum(o.parsed for o in outcomes) / len(outcomes) if outcomes else 0.0,
        "columns": [
            {"answerable": k[0], "category": k[1], "instances": counts.get(k, 0), "accuracy": accuracy.get(k)}
            for k in COLUMNS
        ],
    }
