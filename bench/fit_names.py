"""Fit the PERSON/ORG name check (extract/entities/name_check.py) and measure it out of sample before writing it.

- Data: every PERSON or ORG mention the entity rules make (the check itself off) of
  - the entity gold set (tests/fixtures/entities/gold.jsonl): right when its span (as the gold scoring trims it)
    and its type equal a gold mention's;
  - the `news` pages of `newskg eval facts` that have a mention label in bench/data/fact_labels.jsonl (a reader
    found it a real name of its type), not only the sampled ones.
- Out of sample: five folds grouped by document (gold document or news page: no document on both sides); and
  the `fresh` pages' labelled mentions, held out of the fit entirely (scored, never read here).
- The threshold of each type is the highest whose cross-validated loss of right mentions of that type stays within
  `--max-loss` (the share of right mentions below it): the check buys precision with at most that much recall.

Run: `.venv/bin/python -m bench.fit_names [--write] [--json]` (a few minutes: it links the gold set and extracts
the news and fresh pages).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np
from rich.console import Console
from rich.table import Table
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold
from spacy.tokens import Doc

import newskg.extract.entities.linker as linker_module
from newskg.core.settings import Settings
from newskg.evaluation.entities.gold import DEFAULT_GOLD, load_gold
from newskg.evaluation.entities.run import DAY, parse
from newskg.evaluation.entities.scoring import core_span
from newskg.evaluation.facts.collect import extract, item_key
from newskg.evaluation.facts.corpus import SHARED_DATA, Corpus, load
from newskg.evaluation.facts.labels import DEFAULT_LABELS, LabelStore
from newskg.evaluation.facts.run import FactsConfig
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker, first_seen
from newskg.extract.entities.mentions import RawMention
from newskg.extract.entities.name_check import CHECKED_TYPES, FEATURES, MODEL_FILE, mention_features
from newskg.extract.entities.rules import EntityRules

KINDS = ("PERSON", "ORG")
THRESHOLDS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
C = 0.5  # L2 strength: a few hundred mentions per source, ~40 features


@dataclass
class Labelled:
    x: list[list[float]] = field(default_factory=list)
    y: list[int] = field(default_factory=list)
    groups: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)

    def add(self, features: list[float], right: bool, group: str, text: str) -> None:
        self.x.append(features)
        self.y.append(int(right))
        self.groups.append(group)
        self.texts.append(text)

    def extend(self, other: Labelled) -> Labelled:
        return Labelled(self.x + other.x, self.y + other.y, self.groups + other.groups, self.texts + other.texts)

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        return np.array(self.x, dtype=float), np.array(self.y)


Seen = list[tuple[Doc, list[RawMention]]]


@contextmanager
def recording_mentions() -> Iterator[Seen]:
    """The linker's mentions, chunk by chunk, with the name check off (it is what is being fitted): the stage's
    own `find_mentions`, wrapped where the linker calls it."""
    original = linker_module.find_mentions
    seen: Seen = []

    def record(doc: Doc, person_tokens=None, rules: EntityRules = EntityRules(), known=None) -> list[RawMention]:
        found = original(doc, person_tokens, replace(rules, name_check=False), known)
        seen.append((doc, found))
        return found

    linker_module.find_mentions = record
    try:
        yield seen
    finally:
        linker_module.find_mentions = original


def page_group(page: str) -> str:
    """A page's fold group: the first hex digits of its sha256, the gold document's id (25 of the gold documents are
    news pages too, so one page never stands on both sides of a fold)."""
    return page[:12]


def checked(found: list[RawMention]) -> list[RawMention]:
    return [m for m in found if m.type in CHECKED_TYPES]


def gold_mentions() -> Labelled:
    gold = load_gold(DEFAULT_GOLD)
    out = Labelled()
    with recording_mentions() as seen:
        linker = Linker(AliasIndex())
        for number, doc in enumerate(parse(gold), start=1):
            text = doc.gold.text
            right = {(*core_span(text, g.start, g.end), g.type) for g in doc.gold.mentions}
            for paragraph, parsed in zip(doc.paragraphs, doc.docs, strict=True):
                seen.clear()
                linker.link(parsed.copy(), doc.gold.id, first_seen(DAY, number * 1000))
                chunk, found = seen[-1]
                for m in checked(found):
                    span = (*core_span(text, paragraph.offset + m.start, paragraph.offset + m.end), m.type)
                    out.add(mention_features(chunk, m), span in right, page_group(doc.gold.id), m.text)
    return out


def page_mentions(corpus: Corpus, store: LabelStore, settings: Settings) -> Labelled:
    """The corpus's mentions that carry a reader's label (keyed as `newskg eval facts` keys them)."""
    pages = load(corpus, SHARED_DATA, seed=FactsConfig().seed)
    with recording_mentions() as seen:
        extracted = extract(pages, settings)
    page_of = {m.chunk_text: m.page for m in extracted.mentions}
    out, done = Labelled(), set()
    for chunk, found in seen:
        for m in checked(found):
            key = item_key(f"{m.text}\x1e{m.type}", chunk.text)
            label = store.mentions.get(key)
            if label is None or key in done:
                continue
            done.add(key)
            out.add(mention_features(chunk, m), label.ok, page_group(page_of.get(chunk.text, "")), m.text)
    return out


def fit(x: np.ndarray, y: np.ndarray) -> LogisticRegression:
    return LogisticRegression(C=C, max_iter=5000, class_weight="balanced").fit(x, y)


def out_of_fold(data: Labelled) -> np.ndarray:
    x, y = data.arrays()
    scores = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=5).split(x, y, data.groups):
        scores[test] = fit(x[train], y[train]).predict_proba(x[test])[:, 1]
    return scores


def at_thresholds(scores: np.ndarray, y: np.ndarray) -> list[dict[str, float]]:
    """Per threshold: precision of the mentions kept (score ≥ t) before and after, and the right ones dropped."""
    rows = []
    for t in THRESHOLDS:
        kept = scores >= t
        rows.append(
            {
                "threshold": t,
                "precision_before": float(y.mean()),
                "precision_kept": float(y[kept].mean()) if kept.any() else 0.0,
                "dropped": int((~kept).sum()),
                "right_dropped": float((~kept)[y == 1].mean()) if (y == 1).any() else 0.0,
            }
        )
    return rows


def choose_threshold(scores: np.ndarray, y: np.ndarray, max_loss: float) -> float:
    allowed = [row["threshold"] for row in at_thresholds(scores, y) if row["right_dropped"] <= max_loss]
    return max(allowed, default=0.0)


def of_type(data: Labelled, kind: str) -> np.ndarray:
    """Which rows are mentions of `kind` (its signals stand on its side of the features, the first the bias)."""
    side = 0 if kind == "PERSON" else len(FEATURES) // 2
    x, _ = data.arrays()
    return x[:, side] == 1.0


def per_type(scores: np.ndarray, data: Labelled, rows: np.ndarray) -> dict[str, list[dict[str, float]]]:
    _, y = data.arrays()
    return {kind: at_thresholds(scores[rows & of_type(data, kind)], y[rows & of_type(data, kind)]) for kind in KINDS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write the fitted model to {MODEL_FILE.name}")
    parser.add_argument("--max-loss", type=float, default=0.015, help="right mentions the threshold may drop (CV)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    settings = Settings(_env_file=None)  # pyright: ignore[reportCallIssue] - pydantic-settings' init
    store = LabelStore.load(DEFAULT_LABELS)
    gold, news = gold_mentions(), page_mentions(Corpus.NEWS, store, settings)
    fresh = page_mentions(Corpus.FRESH, store, settings)
    train = gold.extend(news)
    x, y = train.arrays()
    oof = out_of_fold(train)
    thresholds = {k: choose_threshold(oof[of_type(train, k)], y[of_type(train, k)], args.max_loss) for k in KINDS}
    model = fit(x, y)
    fx, fy = fresh.arrays()
    fresh_scores = model.predict_proba(fx)[:, 1]
    everything = np.ones(len(y), dtype=bool)
    is_news = np.arange(len(y)) >= len(gold.y)
    report = {
        "mentions": {"gold": len(gold.y), "news": len(news.y), "fresh": len(fresh.y)},
        "right_share": {"gold": float(np.mean(gold.y)), "news": float(np.mean(news.y)), "fresh": float(fy.mean())},
        "auc_cross_validated": float(roc_auc_score(y, oof)),
        "auc_cross_validated_news": float(roc_auc_score(y[is_news], oof[is_news])),
        "auc_fresh_held_out": float(roc_auc_score(fy, fresh_scores)),
        "thresholds": thresholds,
        "cross_validated": per_type(oof, train, everything),
        "cross_validated_gold": per_type(oof, train, ~is_news),
        "cross_validated_news": per_type(oof, train, is_news),
        "fresh_held_out": per_type(fresh_scores, fresh, np.ones(len(fy), dtype=bool)),
        "weights": dict(zip(FEATURES, (round(float(w), 3) for w in model.coef_[0]), strict=True)),
    }
    if args.write:
        data = {
            "features": list(FEATURES),
            "weights": [round(float(w), 4) for w in model.coef_[0]],
            "bias": round(float(np.asarray(model.intercept_)[0]), 4),
            "thresholds": thresholds,
            "fitted_on": {"gold": len(gold.y), "news": len(news.y)},
        }
        MODEL_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        _print(report)


def _print(report: dict) -> None:
    console = Console()
    console.print(f"labelled mentions {report['mentions']}, right share {report['right_share']}")
    console.print(
        f"AUC: cross-validated {report['auc_cross_validated']:.3f} (news {report['auc_cross_validated_news']:.3f}),"
        f" fresh {report['auc_fresh_held_out']:.3f}; thresholds {report['thresholds']}"
    )
    for name in ("cross_validated", "cross_validated_gold", "cross_validated_news", "fresh_held_out"):
        for kind, rows in report[name].items():
            table = Table(*rows[0].keys(), title=f"{name}: {kind}")
            for row in rows:
                table.add_row(*(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row.values()))
            console.print(table)


if __name__ == "__main__":
    main()
