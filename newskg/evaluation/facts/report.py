"""The fact-precision report: `report.json` (every figure, the sample with its labels), `report.html` (the figures,
the chart, the sample) and `facts.png` (precision with its 95% interval per page set and per rule)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import cast

from matplotlib.axes import Axes
from matplotlib.figure import Figure

from newskg.evaluation.facts.labels import FactLabel
from newskg.evaluation.facts.run import FactsReport, Figures
from newskg.evaluation.kit.report import Html, ReportFolder, images, page, paragraph, section, table


def summary(report: FactsReport) -> dict[str, object]:
    """The one JSON object `newskg eval facts --json` prints: the headline figures, then the same per page set."""
    by_corpus = {str(c): f.model_dump(exclude={"by_rule", "by_confidence"}) for c, f in report.by_corpus.items()}
    by_rule = {str(c): {r: g.model_dump() for r, g in f.by_rule.items()} for c, f in report.by_corpus.items()}
    by_confidence = {
        str(c): {band: g.model_dump() for band, g in f.by_confidence.items()} for c, f in report.by_corpus.items()
    }
    return {
        **report.model_dump(exclude={"sample", "mentions", "by_corpus"}),
        "by_corpus": by_corpus,
        "by_rule": by_rule,
        "by_confidence": by_confidence,
        "todo": len(report.todo),
    }


def _bars(ax: Axes, names: list[str], figures: list[Figures], title: str) -> None:
    values = [f.fact_precision or 0.0 for f in figures]
    low = [v - (f.fact_precision_ci or (v, v))[0] for v, f in zip(values, figures, strict=True)]
    high = [(f.fact_precision_ci or (v, v))[1] - v for v, f in zip(values, figures, strict=True)]
    # matplotlib's own stubs leave these methods' **kwargs untyped: each such call carries a targeted ignore
    ax.bar(names, values, yerr=[low, high], capsize=4, color="#4c78a8")  # pyright: ignore[reportUnknownMemberType]
    for i, f in enumerate(figures):
        ax.text(i, 0.02, f"n={f.facts_labelled}", ha="center", color="white", fontsize=8)  # pyright: ignore[reportUnknownMemberType]
    ax.axhline(0.85, color="#e45756", linestyle="--", linewidth=1)  # pyright: ignore[reportUnknownMemberType]
    ax.set_ylim(0, 1)
    ax.set_title(title)  # pyright: ignore[reportUnknownMemberType]
    ax.tick_params(axis="x", rotation=20)  # pyright: ignore[reportUnknownMemberType]


def _chart(report: FactsReport) -> Figure:
    corpora = list(report.by_corpus)
    rules = sorted({r for f in report.by_corpus.values() for r in f.by_rule})
    fig = Figure(figsize=(4 + 4 * len(corpora), 4))
    axes = list(fig.subplots(1, 1 + len(corpora), squeeze=False)[0])
    _bars(axes[0], [str(c) for c in corpora], [report.by_corpus[c] for c in corpora], "fact precision by page set")
    for ax, corpus in zip(axes[1:], corpora, strict=True):
        present = [r for r in rules if r in report.by_corpus[corpus].by_rule]
        _bars(ax, present, [report.by_corpus[corpus].by_rule[r] for r in present], f"{corpus}: by rule")
    axes[0].set_ylabel("precision (95% interval); dashed: the 0.85 goal")
    return fig


def _f(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, tuple | list):
        return "[" + ", ".join(_f(v) for v in cast("Iterable[object]", value)) + "]"  # isinstance: items unknown
    return str(value)


def _cells(values: list[object]) -> list[str]:
    return [_f(v) for v in values]


def _label_cells(label: FactLabel | None) -> list[object]:
    if label is None:
        return ["(not read)", "", "", ""]
    return [label.readable, label.true, label.subject_ok, label.note]


def _corpus_rows(report: FactsReport) -> list[list[str]]:
    return [
        _cells(
            [
                str(c),
                f.pages,
                f.chunks,
                f.facts,
                f.fact_precision,
                f.fact_precision_ci,
                f.facts_labelled,
                f.facts_sampled,
                f.entity_precision_person,
                f.entity_precision_org,
            ]
        )
        for c, f in report.by_corpus.items()
    ]


def _page(report: FactsReport, chart: Path) -> Html:
    columns = ["page set", "pages", "chunks", "facts", "precision", "95% CI", "labelled", "sampled", "PERSON", "ORG"]
    bands = [
        _cells([str(c), band, g.fact_precision, g.fact_precision_ci, g.facts_labelled])
        for c, f in report.by_corpus.items()
        for band, g in f.by_confidence.items()
    ]
    sample = [
        _cells([x.corpus, x.rule, x.confidence, x.subject, x.text, x.chunk_text[:400], *_label_cells(x.label)])
        for x in report.sample
    ]
    sample_head = ["set", "rule", "confidence", "subject", "fact", "chunk", "readable", "true", "subject", "note"]
    return page(
        "Fact precision",
        {"variant": report.variant, "M0 rules": report.m0_rules, "seed": report.seed, "labels": report.labels},
        paragraph(
            f"All page sets: precision {_f(report.fact_precision)} {_f(report.fact_precision_ci)} over "
            f"{report.facts_labelled} labelled of {report.facts_sampled} sampled facts; entity precision PERSON "
            f"{_f(report.entity_precision_person)}, ORG {_f(report.entity_precision_org)}. A fact is precise when "
            "it is readable, true to its chunk and about its subject (evaluation/facts/README.md)."
        ),
        table(columns, _corpus_rows(report)),
        images([chart]),
        section(
            "By confidence",
            paragraph(
                "The sampled facts of at least each confidence (in sample on news and synthetic, whose labels "
                "fitted the model; out of sample on fresh)."
            ),
            table(["set", "confidence", "precision", "95% CI", "labelled"], bands),
        ),
        section("The sample", table(sample_head, sample)),
    )


def write_report(report: FactsReport, folder: Path) -> dict[str, Path]:
    out = ReportFolder(folder)
    out.json(report)
    out.html(_page(report, out.figure(_chart(report), "facts.png", key="png")))
    return out.paths


def write_todo(report: FactsReport, path: Path) -> int:
    """The sampled items no label covers, one JSON object a line, for a person to read and label."""
    lines = [x.model_dump_json(exclude={"label"}) for x in report.todo]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return len(lines)
