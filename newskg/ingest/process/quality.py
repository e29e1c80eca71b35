"""Main-text quality: token-level F1 of an extracted body against a gold body (the extraction benchmark's
measure)."""

from __future__ import annotations

import re
from collections import Counter

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def token_f1(predicted: str, gold: str) -> float:
    pred, ref = Counter(tokens(predicted)), Counter(tokens(gold))
    overlap = sum((pred & ref).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(pred.values()), overlap / sum(ref.values())
    return 2 * precision * recall / (precision + recall)
