"""IRB report files in the paper's table shapes: `report.json` (every table and every question), `report.html`
and PNGs (embedded, and next to it).

- retrieval: nDCG@5 per retriever, overall and per question attribute (paper Table 3);
- correctness by setting: CORRECT / INCORRECT / NOT_ATTEMPTED shares per setting (closed-book, RAG per
  retriever), unparsed grades counted apart and outside the denominators;
- correctness by attribute: % CORRECT per setting over the valid-premise subsets (hops, paraphrase, popularity
  bucket) and the false-premise questions (paper Table 4);
- retrieval-right vs retrieval-wrong: C/I/N per RAG setting, split by whether every relevant document had a
  passage in the top-5 context (paper Table 5)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from pydantic import BaseModel

from newskg.evaluation.irb.outcomes import CLOSED_BOOK, IRBRun, QuestionResult
from newskg.evaluation.kit.charts import grouped_bars
from newskg.evaluation.kit.report import Html, ReportFolder, images, page, paragraph, section, table

# matplotlib's own stubs leave the Axes methods' **kwargs untyped: the calls below that reach them carry
# `pyright: ignore[reportUnknownMemberType]` for that alone.

GRADES = ("CORRECT", "INCORRECT", "NOT_ATTEMPTED")
GRADE_COLOURS = {"CORRECT": "#2f855a", "INCORRECT": "#c53030", "NOT_ATTEMPTED": "#a0aec0"}


class GradeShares(BaseModel):
    questions: int  # answers in the cell
    graded: int  # of which graded (the denominator)
    unparsed: int
    correct: float | None  # shares of the graded, in [0, 1]; None: nothing graded
    incorrect: float | None
    not_attempted: float | None


class IRBSummary(BaseModel):
    grader: str
    answer_mode: str
    questions: int
    columns: list[str]
    column_sizes: dict[str, int]
    ndcg: dict[str, dict[str, float | None]]  # retriever → column → mean nDCG@5
    by_setting: dict[str, GradeShares]  # setting → C/I/N over every question
    correctness: dict[str, dict[str, float | None]]  # setting → column → share CORRECT
    retrieval_split: dict[str, dict[str, GradeShares]]  # rag setting → "right" | "wrong" → C/I/N
    retrieval_right: dict[str, float]  # retriever → share of questions with correct retrieval
    unparsed_grades: int


def columns(results: Sequence[QuestionResult]) -> dict[str, Callable[[QuestionResult], bool]]:
    """The attribute subsets that hold at least one question, in the paper's order: valid premise by hops,
    paraphrase and popularity, then the false-premise questions."""
    candidates: list[tuple[str, Callable[[QuestionResult], bool]]] = [("all", lambda r: True)]
    valid: list[tuple[str, Callable[[QuestionResult], bool]]] = [("valid", lambda r: r.premise == "valid")]
    for hops in (1, 2):
        valid.append((f"{hops}-hop", lambda r, h=hops: r.premise == "valid" and r.hops == h))
    for kind in sorted({r.paraphrase for r in results}):
        valid.append((f"para:{kind}", lambda r, k=kind: r.premise == "valid" and r.paraphrase == k))
    for bucket in sorted({r.popularity_bucket for r in results}, key=lambda b: int(b.split("-")[0].rstrip("+"))):
        valid.append((f"pop:{bucket}", lambda r, b=bucket: r.premise == "valid" and r.popularity_bucket == b))
    candidates += valid
    candidates.append(("false premise", lambda r: r.premise == "false"))
    return {name: keep for name, keep in candidates if any(keep(r) for r in results)}


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def shares(results: Sequence[QuestionResult], setting: str) -> GradeShares:
    outcomes = [r.answers[setting] for r in results if setting in r.answers]
    graded = [o.grade for o in outcomes if o.grade_status == "graded"]
    n = len(graded)

    def share(grade: str) -> float | None:
        return round(sum(g == grade for g in graded) / n, 6) if n else None

    return GradeShares(
        questions=len(outcomes),
        graded=n,
        unparsed=len(outcomes) - n,
        correct=share("CORRECT"),
        incorrect=share("INCORRECT"),
        not_attempted=share("NOT_ATTEMPTED"),
    )


def summarise(run: IRBRun) -> IRBSummary:
    results = run.results
    subsets = columns(results)
    chosen = {name: [r for r in results if keep(r)] for name, keep in subsets.items()}
    ndcg = {
        retriever: {name: _mean([r.retrieval[retriever].ndcg for r in rows]) for name, rows in chosen.items()}
        for retriever in run.retrievers
    }
    by_setting = {s: shares(results, s) for s in run.settings}
    correctness = {s: {name: shares(rows, s).correct for name, rows in chosen.items()} for s in run.settings}
    split: dict[str, dict[str, GradeShares]] = {}
    for setting in run.settings:
        if setting == CLOSED_BOOK:
            continue
        retriever = setting.removeprefix("rag:")
        split[setting] = {
            "right": shares([r for r in results if r.retrieval[retriever].right], setting),
            "wrong": shares([r for r in results if not r.retrieval[retriever].right], setting),
        }
    right = {
        retriever: round(sum(r.retrieval[retriever].right for r in results) / len(results), 6) if results else 0.0
        for retriever in run.retrievers
    }
    return IRBSummary(
        grader=run.grader,
        answer_mode=run.answer_mode,
        questions=len(results),
        columns=list(subsets),
        column_sizes={name: len(rows) for name, rows in chosen.items()},
        ndcg=ndcg,
        by_setting=by_setting,
        correctness=correctness,
        retrieval_split=split,
        retrieval_right=right,
        unparsed_grades=sum(s.unparsed for s in by_setting.values()),
    )


def grader_label(summary: IRBSummary) -> str:
    return "LLM grader" if summary.grader == "llm" else "deterministic grader (no LLM configured)"


def write_report(run: IRBRun, folder: Path, title: str = "IRB") -> tuple[IRBSummary, dict[str, Path]]:
    summary = summarise(run)
    out = ReportFolder(folder)
    out.json({"summary": summary.model_dump(), "run": run.model_dump()})
    figures = [
        out.figure(_ndcg_chart(summary, title), "retrieval.png"),
        out.figure(_settings_chart(summary, title), "settings.png"),
        out.figure(_split_chart(summary, title), "retrieval_split.png", key="split"),
    ]
    out.html(_page(run, summary, title, figures))
    return summary, out.paths


# --- figures


def _ndcg_chart(summary: IRBSummary, title: str) -> Figure:
    fig = Figure(figsize=(max(6, 1.1 * len(summary.columns)), 4))
    ax = fig.subplots()
    grouped_bars(
        ax,
        [f"{c}\n(n={summary.column_sizes[c]})" for c in summary.columns],
        {retriever: [columns[c] for c in summary.columns] for retriever, columns in summary.ndcg.items()},
        fontsize=7,
    )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("nDCG@5")  # pyright: ignore[reportUnknownMemberType]
    ax.set_title(f"{title}: retrieval nDCG@5 (max-passage) by attribute", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    return fig


def _stacked(ax: Axes, labels: list[str], cells: list[GradeShares]) -> None:
    bottoms = [0.0] * len(cells)
    for grade, key in zip(GRADES, ("correct", "incorrect", "not_attempted"), strict=True):
        values = [getattr(c, key) or 0.0 for c in cells]
        ax.bar(range(len(cells)), values, bottom=bottoms, color=GRADE_COLOURS[grade], label=grade)  # pyright: ignore[reportUnknownMemberType]
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    ax.set_xticks(  # pyright: ignore[reportUnknownMemberType]
        range(len(cells)), [f"{lab}\n(n={c.graded})" for lab, c in zip(labels, cells, strict=True)], fontsize=7
    )
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of graded answers")  # pyright: ignore[reportUnknownMemberType]
    ax.legend(fontsize=7)  # pyright: ignore[reportUnknownMemberType]


def _settings_chart(summary: IRBSummary, title: str) -> Figure:
    fig = Figure(figsize=(max(5, 1.3 * len(summary.by_setting)), 4))
    ax = fig.subplots()
    _stacked(ax, list(summary.by_setting), list(summary.by_setting.values()))
    ax.set_title(f"{title}: grades by setting\n{grader_label(summary)}", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    return fig


def _split_chart(summary: IRBSummary, title: str) -> Figure:
    labels = [f"{s}\n{side}" for s in summary.retrieval_split for side in ("right", "wrong")]
    cells = [summary.retrieval_split[s][side] for s in summary.retrieval_split for side in ("right", "wrong")]
    fig = Figure(figsize=(max(5, 1.1 * max(1, len(cells))), 4))
    ax = fig.subplots()
    if cells:
        _stacked(ax, labels, cells)
    ax.set_title(f"{title}: RAG grades by retrieval right / wrong\n{grader_label(summary)}", fontsize=10)  # pyright: ignore[reportUnknownMemberType]
    return fig


# --- HTML


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}"


def _cin(cell: GradeShares) -> list[str]:
    return [_pct(cell.correct), _pct(cell.incorrect), _pct(cell.not_attempted), str(cell.graded), str(cell.unparsed)]


def tables(summary: IRBSummary) -> dict[str, tuple[list[str], list[list[str]]]]:
    """The report's tables as (header, rows) of strings: the HTML and the CLI print the same cells."""
    sized = [f"{c} (n={summary.column_sizes[c]})" for c in summary.columns]
    ndcg_rows = [[r, *(_pct(summary.ndcg[r][c]) for c in summary.columns)] for r in summary.ndcg]
    setting_rows = [[s, *_cin(cell)] for s, cell in summary.by_setting.items()]
    attr_rows = [[s, *(_pct(summary.correctness[s][c]) for c in summary.columns)] for s in summary.correctness]
    split_rows = [
        [s, *_cin(sides["right"])[:3], *_cin(sides["wrong"])[:3]] for s, sides in summary.retrieval_split.items()
    ]
    return {
        "nDCG@5 (×100) by attribute": (["retriever", *sized], ndcg_rows),
        "grades by setting (% of graded)": (["setting", "C", "I", "N", "graded", "unparsed"], setting_rows),
        "% CORRECT by attribute": (["setting", *sized], attr_rows),
        "retrieval right vs wrong (% of graded)": (
            ["setting", "right C", "right I", "right N", "wrong C", "wrong I", "wrong N"],
            split_rows,
        ),
    }


def _question_rows(run: IRBRun) -> list[list[str]]:
    rows: list[list[str]] = []
    for r in run.results:
        ndcg = ", ".join(f"{k} {v.ndcg:.2f}{' ✓' if v.right else ''}" for k, v in r.retrieval.items())
        grades = ", ".join(f"{k}: {a.grade or a.grade_status}" for k, a in r.answers.items())
        rows.append([r.id[:12], r.question, str(r.hops), r.premise, r.paraphrase, str(r.popularity), ndcg, grades])
    return rows


def _page(run: IRBRun, summary: IRBSummary, title: str, figures: list[Path]) -> Html:
    offline = (
        "Offline answers: RAG is extractive (the best-matching passage sentence), closed-book gives no answer "
        "(NOT_ATTEMPTED). "
        if run.answer_mode == "offline"
        else ""
    )
    head = ["id", "question", "hops", "premise", "paraphrase", "popularity", "nDCG@5 (✓ retrieval right)", "grades"]
    return page(
        title,
        {
            "questions": f"{summary.questions} from {run.questions_file or '-'}",
            "graded by": f"the {grader_label(summary)}",
            "answers": run.answer_mode,
            "unparsable grades": f"{summary.unparsed_grades}, counted apart",
        },
        paragraph(f"{offline}Retrieval is right when every relevant document has a passage among the top {run.k}."),
        *(section(name, table(*cells)) for name, cells in tables(summary).items()),
        images(figures),
        section("Questions", table(head, _question_rows(run))),
    )
