"""The run's files: `leaderboard.json` (the reference's `EvaluationScore` shape, with `raw`), `report.json` (every
figure, every question with its missing strings and judge grade), `report.html` with PNG bars per metric and per
number of hops (embedded, and next to it)."""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, never a display
import matplotlib.pyplot as plt

from evaluation.fanoutqa.records import FanoutReport, QuestionScore

HOP_METRICS = (("loose", "loose acc."), ("strict", "strict acc."), ("rougeL", "ROUGE-L F1"), ("judge", "judge"))


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
    folder.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": folder / "report.json",
        "leaderboard": folder / "leaderboard.json",
        "html": folder / "report.html",
        "metrics": folder / "metrics.png",
        "hops": folder / "hops.png",
    }
    paths["json"].write_text(report.model_dump_json(indent=1), encoding="utf-8")
    paths["leaderboard"].write_text(json.dumps(report.leaderboard_json(), indent=1), encoding="utf-8")
    _metric_chart(report, paths["metrics"], title)
    _hop_chart(report, paths["hops"], title)
    paths["html"].write_text(_html(report, title, [paths["metrics"], paths["hops"]]), encoding="utf-8")
    return paths


def _metric_chart(report: FanoutReport, path: Path, title: str) -> None:
    bars = metric_bars(report)
    fig, ax = plt.subplots(figsize=(8, 4))
    names = list(bars)
    values = [v or 0.0 for v in bars.values()]
    ax.bar(range(len(names)), values, color=["#2b6cb0" if v is not None else "#cbd5e0" for v in bars.values()])
    for x, value in enumerate(bars.values()):
        ax.text(x, (value or 0.0) + 0.02, "n/a" if value is None else f"{value:.3f}", ha="center", fontsize=8)
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.set_title(f"{title} {report.split}: {report.answered}/{report.scored} answered", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _hop_chart(report: FanoutReport, path: Path, title: str) -> None:
    buckets = report.by_hops
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(HOP_METRICS)
    for n, (key, label) in enumerate(HOP_METRICS):
        values = [getattr(b, key) for b in buckets]
        if all(v is None for v in values):
            continue
        xs = [i + (n - (len(HOP_METRICS) - 1) / 2) * width for i in range(len(buckets))]
        ax.bar(xs, [v or 0.0 for v in values], width, label=label)
    ax.set_xticks(range(len(buckets)), [f"{b.hops} hops\n(n={b.questions})" for b in buckets], fontsize=8)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("score")
    ax.legend(fontsize=8)
    ax.set_title(f"{title} {report.split}: by number of evidence pages (hops)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _question_row(q: QuestionScore) -> str:
    judge = "" if q.judge is None else (q.judge.grade or q.judge.status)
    answer = "(no answer)" if q.answer is None else json.dumps(q.answer, ensure_ascii=False)
    return (
        f"<tr><td>{html.escape(q.question_id)}</td><td>{html.escape(q.question)}</td><td>{q.hops}</td>"
        f"<td>{html.escape(answer[:300])}</td><td>{q.loose:.2f}</td><td>{'yes' if q.strict else ''}</td>"
        f"<td>{q.rouge.rougeL.fscore:.2f}</td><td>{html.escape(judge)}</td>"
        f"<td>{html.escape(', '.join(q.missing)[:200])}</td></tr>"
    )


def _html(report: FanoutReport, title: str, figures: list[Path]) -> str:
    metrics = "".join(f"<tr><td>{html.escape(k)}</td><td>{_cell(v)}</td></tr>" for k, v in metric_bars(report).items())
    hops = "".join(
        f"<tr><td>{b.hops}</td><td>{b.questions}</td><td>{b.loose:.3f}</td><td>{b.strict:.3f}</td>"
        f"<td>{b.rouge1:.3f}</td><td>{b.rouge2:.3f}</td><td>{b.rougeL:.3f}</td><td>{_cell(b.judge)}</td></tr>"
        for b in report.by_hops
    )
    judge = ""
    if report.judge:
        j = report.judge
        judge = (
            f"<p>judge {html.escape(j.model)}: {j.graded} graded ({j.correct} correct), {j.unparsed} unparsed, "
            f"{j.unanswered} unanswered; grades {html.escape(json.dumps(j.grades))}; {j.calls} calls, {j.cached} "
            f"cached, {j.prompt_tokens}+{j.completion_tokens} tokens</p>"
        )
    notes = "".join(f"<li>{html.escape(n)}</li>" for n in report.notes)
    images = "".join(
        f'<p><img alt="{p.stem}" src="data:image/png;base64,{base64.b64encode(p.read_bytes()).decode()}"></p>'
        for p in figures
    )
    rows = "".join(_question_row(q) for q in report.per_question)
    return (
        f"<!doctype html><meta charset=utf-8><title>{html.escape(title)}</title>"
        f"<style>body{{font-family:sans-serif}} td,th{{padding:3px 8px;border:1px solid #ccc;vertical-align:top}}"
        f"</style><h1>{html.escape(title)} ({report.split})</h1>"
        f"<p>answers: {html.escape(report.answers_file or '-')}; {report.answered} of {report.scored} scored "
        f"questions answered ({report.unanswered} unanswered score 0"
        f"{'; only answered questions scored' if report.only_answered else ''}).</p>"
        f"<table><tr><th>metric</th><th>score</th></tr>{metrics}</table>{judge}<ul>{notes}</ul>"
        f"<h2>By number of hops</h2><table><tr><th>hops</th><th>questions</th><th>loose</th><th>strict</th>"
        f"<th>R-1</th><th>R-2</th><th>R-L</th><th>judge</th></tr>{hops}</table>{images}"
        f"<h2>Questions</h2><table><tr><th>id</th><th>question</th><th>hops</th><th>answer</th><th>loose</th>"
        f"<th>strict</th><th>R-L</th><th>judge</th><th>missing (normalised)</th></tr>{rows}</table>"
        f"{_traces(report)}"
        f"<p>reference versions: {html.escape(json.dumps(report.provenance))}</p>"
    )


def _traces(report: FanoutReport) -> str:
    """When the run answered the questions itself: every sub-question, how much evidence it found, its sub-answer
    (the evidence itself is in report.json)."""
    if not report.traces:
        return ""
    rows = "".join(
        f"<tr><td>{html.escape(t.question_id)}</td><td>{html.escape(s.kind)}</td><td>{html.escape(s.question)}</td>"
        f"<td>{len(s.evidence)}</td><td>{html.escape(json.dumps(s.answer, ensure_ascii=False)[:300])}</td></tr>"
        for t in report.traces
        for s in t.steps
    )
    return (
        "<h2>Sub-questions</h2><table><tr><th>question</th><th>step</th><th>sub-question</th><th>evidence</th>"
        f"<th>sub-answer</th></tr>{rows}</table>"
    )
