"""Can a classifier over a sentence's shape tell news prose from the rest of a page (navigation, captions,
bylines, link lists, newsletter boxes) well enough to gate M0's facts? Measured, not assumed: every sentence the
process stage keeps from the 91 real pages is labelled by the page's gold body (`ground-truth.json`: a sentence
not inside the gold body is not the article's news), and a logistic model over the same sentence features the
fact confidence model reads (extract/sentence_shape.py `sentence_shape`) is scored out of sample, five folds
grouped by page: AUC, and at each threshold how many sentences it would gate, the share of them that really are
outside the body (precision) and the share of all such sentences it finds (recall).

Run: `.venv/bin/python -m bench.non_news [--json]` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
from rich.console import Console
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GroupKFold

from newskg.core.settings import Settings
from newskg.evaluation.facts.corpus import SHARED_DATA, Corpus, load
from newskg.extract.nlp import parse
from newskg.extract.sentence_shape import sentence_shape, shape_features
from newskg.ingest.process.article import build_article
from newskg.ingest.process.chunk_articles import chunk_articles

THRESHOLDS = (0.5, 0.7, 0.8, 0.9)


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def sentences() -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(features, 1 = outside the gold body, page) for each distinct sentence of each page."""
    gold = json.loads((SHARED_DATA / "news-html" / "ground-truth.json").read_text(encoding="utf-8"))
    settings = Settings(_env_file=None)  # pyright: ignore[reportCallIssue] - pydantic-settings' init
    rows, labels, pages = [], [], []
    for page in load(Corpus.NEWS, SHARED_DATA):
        body = _norm(gold[page.key]["articleBody"])
        chunks = chunk_articles([build_article(page.raw)], settings)
        seen: set[str] = set()
        for chunk, doc in zip(chunks, parse([c.text for c in chunks], [c.sentences for c in chunks]), strict=True):
            for n, sentence in enumerate(doc.sents):
                if sentence.text.strip() in seen:
                    continue
                seen.add(sentence.text.strip())
                rows.append(shape_features(sentence_shape(sentence, chunk.sentence_start + n)))
                labels.append(int(_norm(sentence.text) not in body))
                pages.append(page.key)
    return np.array(rows), np.array(labels), pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    x, y, groups = sentences()
    scores = np.zeros(len(y))
    for train, test in GroupKFold(n_splits=5).split(x, y, groups):
        model = LogisticRegression(max_iter=2000, class_weight="balanced").fit(x[train], y[train])
        scores[test] = model.predict_proba(x[test])[:, 1]
    report = {
        "sentences": len(y),
        "outside_body": int(y.sum()),
        "auc": round(float(roc_auc_score(y, scores)), 3),
        "at": [
            {
                "threshold": t,
                "gated": int((scores >= t).sum()),
                "precision": round(float(y[scores >= t].mean()), 3) if (scores >= t).any() else 0.0,
                "recall": round(float(y[scores >= t].sum() / y.sum()), 3),
            }
            for t in THRESHOLDS
        ],
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        Console().print_json(json.dumps(report))


if __name__ == "__main__":
    main()
