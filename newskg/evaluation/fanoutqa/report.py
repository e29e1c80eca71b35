"""The run's files: `leaderboard.json` (the reference's `EvaluationScore` shape, with `raw`), `report.json` (every
figure, every question with its missing strings and judge grade), `report.html` with PNG bars per metric and per
number of hops (embedded, and next to it)."""

from __future__ import annotations

import json
from pathlib import Path

from matplotlib.figure import Figure

from newskg.evaluation.fanoutqa.records import FanoutReport, QuestionScore
from newskg.evaluation.kit.charts import grouped_bars
from newskg.evaluation.kit.report import Html, ReportFolder, bullets, images, page, paragraph, section, table

# matplotlib's own stubs leave the Axes methods' **kwargs untyped: the calls below that reach them carry
# `pyright: ignore[reportUnknownMemberType]` for that alone.

HOP_METRICS = (("loose", "loose acc."), ("strict", "strict acc."), ("rougeL", "ROUGE-L F1"), ("judge", "judge"))
HOP_COLUMNS = ("hops", "questions", "loose", "strict", "R-1", "R-2", "R-L", "judge")


def metric_bars(report: FanoutReport) -> dict[str, float | None]:
    """The headline figures in [0, 1]; None: not computed (BLEURT always, the judge without --judge)."""
    board = report.leaderboard
    return {
        "loose acc.": board.acc.loose,
        "strict acc.": board.acc.strict,
        "ROUGE-1 F1": board.rouge.rouge1.fscore,
        "ROUGE-2 F1": board.rouge.rouge2.fscore,
        "ROUGE-L F1": board.rouge.rougeL.fscore,
        "BLEURT": board.bleurt,
        "LLM judge": board.gpt,
    }


def write_report(report: FanoutReport, folder: Path, title: str = "FanOutQA") -> dict[str, Path]:
    out = ReportFolder(folder)
    out.json(report)
    out.json(report.leaderboard_json(), "leaderboard.json", key="leaderboard")
    figures = [
        out.figure(_metric_chart(report, title), "metrics.png"),
        out.figure(_hop_chart(report, title), "hops.png"),
    ]
    out.html(_page(report, title, figures))
    return out.paths


def _metric_chart(report: FanoutReport, title: str) -> Figure:
    bars = metric_bars(report)
    fig = Figure(figsize=(8, 4))
    ax = fig.subplots()
    names = list(bars)
    values = [v or 0.0 for v in bars.values()]
    ax.bar(range(len(names)), values, color=["#2b6cb0" if v is not None else "#cbd5e0" for v in bars.values()])  # pyright: ignore[reportUnknownMemberType]
    for x, value in enumerate(bars.values()):
        ax.text(x, (value or 0.0) + 0.02, "n/a" if value is None else f"{value:.3f}", ha="center", fontsize=8)  # pyright: ignore[reportUnknownMemberType]
    ax.set_xticks(range(len(names)), names, fontsize=8)  # pyright: ignore[reportUnknownMemberType]
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")  # pyright: ignore[reportUnknownMemberType]
    ax.set_title(f"{title} {report.split}: {report.answered}/{report.scored} answered", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    return fig


def _hop_chart(report: FanoutReport, title: str) -> Figure:
    buckets = report.by_hops
    series = {label: [getattr(b, key) for b in buckets] for key, label in HOP_METRICS}
    fig = Figure(figsize=(9, 4))
    ax = fig.subplots()
    grouped_bars(
        ax,
        [f"{b.hops} hops\n(n={b.questions})" for b in buckets],
        {label: values for label, values in series.items() if any(v is not None for v in values)},
    )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")  # pyright: ignore[reportUnknownMemberType]
    ax.set_title(f"{title} {report.split}: by number of evidence pages (hops)", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    return fig


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _question_row(q: QuestionScore) -> list[object]:
    judge = "" if q.judge is None else (q.judge.grade or q.judge.status)
    answer = "(no answer)" if q.answer is None else json.dumps(q.answer, ensure_ascii=False)
    return [
        q.question_id,
        q.question,
        q.hops,
        answer[:300],
        f"{q.loose:.2f}",
        "yes" if q.strict else "",
        f"{q.rouge.rougeL.fscore:.2f}",
        judge,
        ", ".join(q.missing)[:200],
    ]


def _judge_line(report: FanoutReport) -> Html:
    if not report.judge:
        return Html("")
    j = report.judge
    return paragraph(
        f"judge {j.model}: {j.graded} graded ({j.correct} correct), {j.unparsed} unparsed, {j.unanswered} "
        f"unanswered; grades {json.dumps(j.grades)}; {j.calls} calls, {j.cached} cached, "
        f"{j.prompt_tokens}+{j.completion_tokens} tokens"
    )


def _page(report: FanoutReport, title: str, figures: list[Path]) -> Html:
    hops = [
        [b.hops, b.questions, *(f"{v:.3f}" for v in (b.loose, b.strict, b.rouge1, b.rouge2, b.rougeL)), _cell(b.judge)]
        for b in report.by_hops
    ]
    question_head = ["id", "question", "hops", "answer", "loose", "strict", "R-L", "judge", "missing (normalised)"]
    return page(
        f"{title} ({report.split})",
        {
            "answers": report.answers_file or "-",
            "answered": f"{report.answered} of {report.scored} scored questions",
            "unanswered": f"{report.unanswered} (scored 0)",
            "scored": "the answered questions only" if report.only_answered else "every question",
        },
        table(["metric", "score"], [[k, _cell(v)] for k, v in metric_bars(report).items()]),
        _judge_line(report),
        bullets(report.notes),
        section("By number of hops", table(HOP_COLUMNS, hops)),
        images(figures),
        section("Questions", table(question_head, [_question_row(q) for q in report.per_question])),
        _traces(report),
        paragraph(f"reference versions: {json.dumps(report.provenance)}"),
    )


def _traces(report: FanoutReport) -> Html:
    """When the run answered the questions itself: every sub-question, how much evidence it found, its sub-answer
    (the evidence itself is in report.json)."""
    if not report.traces:
        return Html("")
    rows = [
        [t.question_id, s.kind, s.question, len(s.evidence), json.dumps(s.answer, ensure_ascii=False)[:300]]
        for t in report.traces
        for s in t.steps
    ]
    return section("Sub-questions", table(["question", "step", "sub-question", "evidence", "sub-answer"], rows))
