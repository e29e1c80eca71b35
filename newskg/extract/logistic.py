"""A fitted logistic model read from its JSON file: the fact confidence (extract/openie/confidence.py) and the name
check (extract/entities/name_check.py) are each one, fitted by a bench script that writes the file."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class LogisticModel:
    names: tuple[str, ...]  # the features, in the order of the weights
    weights: tuple[float, ...]
    bias: float

    def score(self, values: Sequence[float]) -> float:
        """The fitted probability for one row of feature values."""
        z = self.bias + sum(w * v for w, v in zip(self.weights, values, strict=True))
        return 1.0 / (1.0 + math.exp(-z))


def load(path: Path, features: tuple[str, ...], fit_script: str) -> tuple[LogisticModel, dict[str, Any]]:
    """The model in `path` and the file's whole content (for what else it stores); refused when it was fitted on
    other features than `features`: a feature added without refitting would misread every weight."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if tuple(data["features"]) != features:
        raise RuntimeError(f"{path.name} was fitted on other features: run {fit_script}")
    return LogisticModel(features, tuple(data["weights"]), float(data["bias"])), data
