"""The run's report: `report.json` (figures and every prediction), `report.html` with a bar chart of accuracy per
category (PNG next to it, embedded too) and, when ablation sets ran, ADTScore over the number of irrelevant
articles."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt

from evaluation.neoqa.run import RunResult

RANDOM = 100 / 7


def write_report(result: RunResult, folder: Path, title: str) -> dict[str, Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"json": folder / "report.json", "html": folder / "report.html", "categories": folder / "categories.png"}
    paths["json"].write_text(
        json.dumps(
            {
                "answerer": result.answerer,
                "summary": result.summary,
                "by_set": result.by_set,
                "predictions": result.predictions,
            },
            indent=1,
        )
    )
    main = result.by_set.get("main", result.summary)
    _bar_chart(main, paths["categories"], f"{title}: accuracy per category ({result.answerer})")
    figures = [paths["categories"]]
    ablation = {int(k.split("-")[1]): v for k, v in result.by_set.items() if k.startswith("ablation-")}
    if ablation:
        paths["ablation"] = folder / "ablation.png"
        _ablation_chart(ablation, paths["ablation"])
        figures.append(paths["ablation"])
    paths["html"].write_text(_html(result, title, figures), encoding="utf-8")
    return paths


def _bar_chart(summary: dict, path: Path, title: str) -> None:
    columns = [c for c in summary["columns"] if c["instances"]]
    labels = [f"{c['category']}\n({c['answerable']}, n={c['instances']})" for c in columns]
    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.bar(
        range(len(columns)),
        [c["accuracy"] or 0 for c in columns],
        color=["#2b6cb0" if c["answerable"] == "answerable" else "#c05621" for c in columns],
    )
    ax.axhline(RANDOM, color="grey", linestyle="--", label="random (14.3)")
    ax.set_xticks(range(len(columns)), labels, fontsize=8)
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy %")
    ax.set_title(title + f"  ADTScore {summary['adt_score']:.1f}", fontsize=10)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _ablation_chart(ablation: dict[int, dict], path: Path) -> None:
    steps = sorted(ablation)
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, label in (
        ("adt_score", "ADTScore"),
        ("acc_answerable", "answerable"),
        ("acc_unanswerable", "unanswerable"),
    ):
        ax.plot(steps, [ablation[s][key] for s in steps], marker="o", label=label)
    ax.set_xlabel("irrelevant articles added")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.legend()
    ax.set_title("Irrelevant-document ablation (NeoQA E.3)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def img_tag(path: Path) -> str:
    """A PNG embedded in the page, so the HTML report is one self-contained file."""
    data = base64.b64encode(path.read_bytes()).decode()
    return f'<img alt="{html.escape(path.stem)}" src="data:image/png;base64,{data}">'


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.1f}"


def _row(name: str, s: dict) -> str:
    cells = [
        str(s["instances"]),
        _cell(s["adt_score"]),
        _cell(s["acc_answerable"]),
        _cell(s["acc_unanswerable"]),
        _cell(s["parse_rate"]),
        *(_cell(c["accuracy"]) for c in s["columns"]),
    ]
    return f"<tr><td>{html.escape(name)}</td>" + "".join(f"<td>{c}</td>" for c in cells) + "</tr>"


def _html(result: RunResult, title: str, figures: list[Path]) -> str:
    rows = "".join(_row(name, s) for name, s in [("all", result.summary), *result.by_set.items()])
    heads = "".join(f"<th>{html.escape(c['category'])}<br>{c['answerable']}</th>" for c in result.summary["columns"])
    images = "".join(f"<p>{img_tag(p)}</p>" for p in figures)
    return (
        f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<style>body{{font-family:sans-serif}} td,th{{padding:3px 8px;border:1px solid #ccc}}</style>"
        f"<h1>{html.escape(title)}</h1><p>answerer: {html.escape(result.answerer)}; random guessing scores 14.3."
        f"</p><table><tr><th>set</th><th>instances</th><th>ADTScore</th><th>acc answerable</th>"
        f"<th>acc unanswerable</th><th>parse rate</th>{heads}</tr>{rows}</table>{images}"
    )
