"""The entity evaluation's figures: one row per configuration (the table the README shows), `report.json` with
every figure and, for the last configuration, every missed and spurious mention; `report.html` with the table
and a PNG chart (embedded, and next to it)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from matplotlib.figure import Figure
from pydantic import BaseModel

from newskg.evaluation.entities.gold import GoldDocument
from newskg.evaluation.entities.run import ConfigurationResult
from newskg.evaluation.entities.scoring import Scores, core_span, is_name
from newskg.evaluation.kit.report import Html, ReportFolder, images, page, paragraph, table

HEADLINE_TYPES = ("PERSON", "ORG")
COLUMNS = (
    "configuration",
    "PERSON P",
    "PERSON R",
    "ORG P",
    "ORG R",
    "F1",
    "F1 lenient",
    "type",
    "linking",
    "short forms",
)


class ConfigurationFigures(BaseModel):
    name: str
    rules: dict[str, bool] | None  # None: the plain spaCy model
    scores: Scores


class MentionError(BaseModel):
    doc: str
    start: int
    end: int
    text: str
    type: str
    kind: str  # missed | spurious


class EntityReport(BaseModel):
    gold: str
    split: str = "all"  # all | dev | test (evaluation/entities/gold.py split_documents)
    documents: int
    gold_mentions: int
    configurations: list[ConfigurationFigures]
    errors: list[MentionError]  # of the last configuration (the default rules: what the extract stage runs)


def _f(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def row(figures: ConfigurationFigures) -> list[str]:
    s = figures.scores
    return [
        figures.name,
        _f(s.exact["PERSON"].precision if "PERSON" in s.exact else None),
        _f(s.exact["PERSON"].recall if "PERSON" in s.exact else None),
        _f(s.exact["ORG"].precision if "ORG" in s.exact else None),
        _f(s.exact["ORG"].recall if "ORG" in s.exact else None),
        _f(s.exact["all"].f1),
        _f(s.lenient["all"].f1),
        _f(s.type_accuracy.value),
        _f(s.linking_accuracy.value),
        _f(s.short_form_linking.value),
    ]


def by_type(figures: ConfigurationFigures) -> list[list[str]]:
    """Per type: exact P / R / F1 and lenient F1 (rows: each type, then all types, then any type)."""
    s = figures.scores
    return [
        [
            kind,
            str(p.gold),
            str(p.predicted),
            _f(p.precision),
            _f(p.recall),
            _f(p.f1),
            _f(s.lenient[kind].f1 if kind in s.lenient else None),
        ]
        for kind, p in s.exact.items()
    ]


TYPE_COLUMNS = ("type", "gold", "predicted", "P", "R", "F1", "F1 lenient")


def errors(gold: list[GoldDocument], result: ConfigurationResult) -> list[MentionError]:
    out: list[MentionError] = []
    for doc in gold:
        predicted = [m for m in result.predictions[doc.id].mentions if is_name(m.text)]
        gold_keys = {(*core_span(doc.text, m.start, m.end), m.type) for m in doc.mentions}
        pred_keys = {(*core_span(doc.text, m.start, m.end), m.type) for m in predicted}
        out += [
            MentionError(doc=doc.id, start=m.start, end=m.end, text=m.text, type=m.type, kind="missed")
            for m in doc.mentions
            if (*core_span(doc.text, m.start, m.end), m.type) not in pred_keys
        ]
        out += [
            MentionError(doc=doc.id, start=m.start, end=m.end, text=m.text, type=m.type, kind="spurious")
            for m in predicted
            if (*core_span(doc.text, m.start, m.end), m.type) not in gold_keys
        ]
    return out


def build_report(
    gold_path: Path, gold: list[GoldDocument], results: list[ConfigurationResult], split: str = "all"
) -> EntityReport:
    configurations = [
        ConfigurationFigures(
            name=r.configuration.name,
            rules=None if r.configuration.rules is None else asdict(r.configuration.rules),
            scores=r.scores,
        )
        for r in results
    ]
    return EntityReport(
        gold=str(gold_path),
        split=split,
        documents=len(gold),
        gold_mentions=sum(len(d.mentions) for d in gold),
        configurations=configurations,
        errors=errors(gold, results[-1]),
    )


def _chart(report: EntityReport) -> Figure:
    names = [c.name for c in report.configurations]
    series = {
        "PERSON F1": [c.scores.exact.get("PERSON") for c in report.configurations],
        "ORG F1": [c.scores.exact.get("ORG") for c in report.configurations],
    }
    fig = Figure(figsize=(10, 4.5))
    ax = fig.subplots()
    # matplotlib's own stubs leave these methods' **kwargs untyped: each such call carries a targeted ignore
    for label, cells in series.items():
        ax.plot(names, [(c.f1 or 0.0) if c else 0.0 for c in cells], marker="o", label=label)  # pyright: ignore[reportUnknownMemberType]
    type_accuracy = [c.scores.type_accuracy.value or 0.0 for c in report.configurations]
    ax.plot(names, type_accuracy, marker="s", label="type acc.")  # pyright: ignore[reportUnknownMemberType]
    linking_accuracy = [c.scores.linking_accuracy.value or 0.0 for c in report.configurations]
    ax.plot(names, linking_accuracy, marker="^", label="linking acc.")  # pyright: ignore[reportUnknownMemberType]
    ax.set_ylim(0, 1)
    ax.set_ylabel("exact-span figure")  # pyright: ignore[reportUnknownMemberType]
    ax.set_title(f"entities on {report.documents} annotated documents ({report.gold_mentions} mentions)")  # pyright: ignore[reportUnknownMemberType]
    ax.tick_params(axis="x", rotation=20)  # pyright: ignore[reportUnknownMemberType]
    ax.legend(loc="lower right")  # pyright: ignore[reportUnknownMemberType]
    return fig


def _page(report: EntityReport, chart: Path) -> Html:
    missed = sum(e.kind == "missed" for e in report.errors)
    spurious = len(report.errors) - missed
    return page(
        f"Entities — {report.gold} ({report.split})",
        {"documents": report.documents, "gold mentions": report.gold_mentions},
        paragraph(
            "Exact spans (after trimming punctuation, possessives, titles and 'the'); P/R per type need the type "
            "right too."
        ),
        table(COLUMNS, [row(c) for c in report.configurations]),
        images([chart]),
        paragraph(f"Last configuration: {missed} missed and {spurious} spurious mentions, listed in report.json."),
    )


def write_report(report: EntityReport, folder: Path) -> dict[str, Path]:
    out = ReportFolder(folder)
    out.json(report)
    out.html(_page(report, out.figure(_chart(report), "entities.png", key="png")))
    return out.paths
