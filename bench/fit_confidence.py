"""Fit the M0 fact confidence model (extract/openie/confidence.py) on the labelled facts, and measure it out of
sample before writing it.

- Data: every fact M0 (wide rules, nothing dropped) makes of the `news` and `synthetic` page sets of `newskg eval
  facts` that has a label in bench/data/fact_labels.jsonl (not only the sampled ones); a fact is positive when a
  reader found it clean (readable, true to its chunk, right subject).
- Out of sample: five folds grouped by page (no page's facts on both sides), and the `fresh` pages held out of the
  fit entirely. For each, the precision of the facts kept at each threshold and the share of clean facts kept.
- The model written is fitted on `news` + `synthetic` only, so `fresh` stays a test of it.

Run: `.venv/bin/python -m bench.fit_confidence [--write] [--json]` (a few minutes: it extracts every page set).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass

import numpy as np
from rich.console import Console
from rich.table import Table
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from newskg.core.settings import Settings
from newskg.evaluation.facts.collect import Fact, extract
from newskg.evaluation.facts.corpus import SHARED_DATA, Corpus, load
from newskg.evaluation.facts.labels import DEFAULT_LABELS, LabelStore
from newskg.evaluation.facts.run import FactsConfig
from newskg.extract.openie.confidence import FEATURES, MODEL_FILE

THRESHOLDS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7)
FIT_CORPORA = (Corpus.NEWS, Corpus.SYNTHETIC)


@dataclass
class Labelled:
    x: np.ndarray
    y: np.ndarray
    groups: list[str]


def labelled_facts(corpus: Corpus, store: LabelStore, settings: Settings) -> Labelled:
    pages = load(corpus, SHARED_DATA, seed=FactsConfig().seed)  # the synthetic stream `newskg eval facts` labels
    facts: list[Fact] = extract(pages, settings).facts
    seen: set[str] = set()
    rows, ys, groups = [], [], []
    for fact in facts:
        label = store.facts.get(fact.key)
        if label is None or fact.key in seen or not fact.features:
            continue
        seen.add(fact.key)
        rows.append(fact.features)
        ys.append(int(label.clean))
        groups.append(f"{corpus.value}:{fact.page}")
    return Labelled(np.array(rows, dtype=float), np.array(ys), groups)


def fit(x: np.ndarray, y: np.ndarray) -> LogisticRegression:
    return LogisticRegression(C=1.0, max_iter=2000).fit(x, y)


def at_thresholds(scores: np.ndarray, y: np.ndarray) -> list[dict[str, float]]:
    """Precision of the facts kept (score ≥ t) and the share of clean facts kept, per threshold."""
    rows = []
    for t in THRESHOLDS:
        kept = scores >= t
        rows.append(
            {
                "threshold": t,
                "kept": int(kept.sum()),
                "precision": float(y[kept].mean()) if kept.any() else 0.0,
                "clean_kept": float(kept[y == 1].mean()) if (y == 1).any() else 0.0,
            }
        )
    return rows


def out_of_fold(data: Labelled) -> np.ndarray:
    scores = np.zeros(len(data.y))
    for train, test in GroupKFold(n_splits=5).split(data.x, data.y, data.groups):
        scores[test] = fit(data.x[train], data.y[train]).predict_proba(data.x[test])[:, 1]
    return scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write the fitted model to {MODEL_FILE.name}")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = Settings(_env_file=None)  # pyright: ignore[reportCallIssue] - pydantic-settings' init
    settings = settings.model_copy(update={"extract_m0_rules": "wide", "extract_min_confidence": 0.0})
    store = LabelStore.load(DEFAULT_LABELS)
    sets = {c: labelled_facts(c, store, settings) for c in (*FIT_CORPORA, Corpus.FRESH)}
    train = Labelled(
        np.vstack([sets[c].x for c in FIT_CORPORA]),
        np.concatenate([sets[c].y for c in FIT_CORPORA]),
        [g for c in FIT_CORPORA for g in sets[c].groups],
    )
    oof = out_of_fold(train)
    model = fit(train.x, train.y)
    fresh = sets[Corpus.FRESH]
    fresh_scores = model.predict_proba(fresh.x)[:, 1]
    counts = {c.value: len(sets[c].y) for c in sets}
    report = {
        "facts": counts,
        "clean_share": {c.value: float(sets[c].y.mean()) for c in sets},
        "auc_cross_validated": float(roc_auc_score(train.y, oof)),
        "auc_fresh_held_out": float(roc_auc_score(fresh.y, fresh_scores)),
        "cross_validated": at_thresholds(oof, train.y),
        "fresh_held_out": at_thresholds(fresh_scores, fresh.y),
        "weights": dict(zip(FEATURES, (round(float(w), 3) for w in model.coef_[0]), strict=True)),
    }
    if args.write:
        weights = [round(float(w), 4) for w in model.coef_[0]]
        bias = round(float(np.asarray(model.intercept_)[0]), 4)
        data = {"features": list(FEATURES), "weights": weights, "bias": bias}
        MODEL_FILE.write_text(json.dumps({**data, "fitted_on": counts}, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)


def _print(report: dict) -> None:
    console = Console()
    console.print(f"labelled facts {report['facts']}, clean share {report['clean_share']}")
    console.print(f"AUC: cross-validated {report['auc_cross_validated']:.3f}, fresh {report['auc_fresh_held_out']:.3f}")
    for name in ("cross_validated", "fresh_held_out"):
        table = Table("threshold", "kept", "precision", "clean kept", title=name)
        for row in report[name]:
            table.add_row(*(f"{row[k]:.3f}" if isinstance(row[k], float) else str(row[k]) for k in row))
        console.print(table)


if __name__ == "__main__":
    main()
