"""The run's report: `report.json` (figures and every prediction), `report.html` with a bar chart of accuracy per
category (PNG next to it, embedded too) and, when ablation sets ran, ADTScore over the number of irrelevant
articles."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from matplotlib.figure import Figure

from newskg.evaluation.kit.report import BREAK, Html, ReportFolder, images, join, page, paragraph, table
from newskg.evaluation.neoqa.metrics import Summary
from newskg.evaluation.neoqa.records import RunResult

RANDOM = 100 / 7
# The ablation chart's lines: a summary's figure and its legend label.
ABLATION_CURVES: tuple[tuple[Literal["adt_score", "acc_answerable", "acc_unanswerable"], str], ...] = (
    ("adt_score", "ADTScore"),
    ("acc_answerable", "answerable"),
    ("acc_unanswerable", "unanswerable"),
)


def write_report(result: RunResult, folder: Path, title: str) -> dict[str, Path]:
    out = ReportFolder(folder)
    out.json(
        {
            "answerer": result.answerer,
            "summary": result.summary,
            "by_set": result.by_set,
            "predictions": result.predictions,
        }
    )
    main = result.by_set.get("main", result.summary)
    figures = [out.figure(_bar_chart(main, f"{title}: accuracy per category ({result.answerer})"), "categories.png")]
    ablation = {int(k.split("-")[1]): v for k, v in result.by_set.items() if k.startswith("ablation-")}
    if ablation:
        figures.append(out.figure(_ablation_chart(ablation), "ablation.png"))
    out.html(_page(result, title, figures))
    return out.paths


# The Axes calls below ignore reportUnknownMemberType: matplotlib's stubs leave their **kwargs unannotated.


def _bar_chart(summary: Summary, title: str) -> Figure:
    columns = [c for c in summary["columns"] if c["instances"]]
    labels = [f"{c['category']}\n({c['answerable']}, n={c['instances']})" for c in columns]
    fig = Figure(figsize=(10, 4.5))
    ax = fig.subplots()
    ax.bar(  # pyright: ignore[reportUnknownMemberType]
        range(len(columns)),
        [c["accuracy"] or 0 for c in columns],
        color=["#2b6cb0" if c["answerable"] == "answerable" else "#c05621" for c in columns],
    )
    ax.axhline(RANDOM, color="grey", linestyle="--", label="random (14.3)")  # pyright: ignore[reportUnknownMemberType]
    ax.set_xticks(range(len(columns)), labels, fontsize=8)  # pyright: ignore[reportUnknownMemberType]
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy %")  # pyright: ignore[reportUnknownMemberType]
    ax.set_title(title + f"  ADTScore {summary['adt_score']:.1f}", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    ax.legend()  # pyright: ignore[reportUnknownMemberType]
    return fig


def _ablation_chart(ablation: dict[int, Summary]) -> Figure:
    steps = sorted(ablation)
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for key, label in ABLATION_CURVES:
        ax.plot(steps, [ablation[s][key] for s in steps], marker="o", label=label)  # pyright: ignore[reportUnknownMemberType]
    ax.set_xlabel("irrelevant articles added")  # pyright: ignore[reportUnknownMemberType]
    ax.set_ylabel("%")  # pyright: ignore[reportUnknownMemberType]
    ax.set_ylim(0, 100)
    ax.legend()  # pyright: ignore[reportUnknownMemberType]
    ax.set_title("Irrelevant-document ablation (NeoQA E.3)", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    return fig


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _row(name: str, s: Summary) -> list[str]:
    figures = [s["adt_score"], s["acc_answerable"], s["acc_unanswerable"], s["parse_rate"]]
    return [name, str(s["instances"]), *map(_cell, figures), *(_cell(c["accuracy"]) for c in s["columns"])]


def _page(result: RunResult, title: str, figures: list[Path]) -> Html:
    categories = [join([c["category"], BREAK, c["answerable"]]) for c in result.summary["columns"]]
    head = ["set", "instances", "ADTScore", "acc answerable", "acc unanswerable", "parse rate", *categories]
    rows = [_row(name, s) for name, s in [("all", result.summary), *result.by_set.items()]]
    return page(
        title,
        {"answerer": result.answerer, "instances": result.summary["instances"]},
        paragraph(f"Random guessing scores {RANDOM:.1f}."),
        table(head, rows),
        images(figures),
    )
