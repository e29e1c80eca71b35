"""The offline multiple-choice reader: no LLM, just the evidence. It answers only when the evidence states
everything the question presupposes, and deflects ("Unanswerable") otherwise, the behaviour NeoQA rewards.

- Time-span ("How many days …between X and Y?"): each moment is matched to a dated evidence sentence that
  covers the moment's content words; the day difference must equal an option.
- Otherwise: an option is supported by a sentence that contains it, joined to at most one sentence sharing a
  name with it (the bridge); the option wins when the pair covers the question's content words. Coverage below
  the threshold means something the question assumes is not in the evidence: deflect.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from functools import lru_cache

from newskg.evaluation.neoqa.records import UNANSWERABLE

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"“'])")
WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*|\d[\d,]*")
NAME = re.compile(r"\b[A-Z][\w’'-]+(?:\s+(?:of\s+)?[A-Z][\w’'-]+)*")
DATE = re.compile(
    r"\b(January|February|March|April|May|June|July|August|September|October|November|December)"
    r"\s+(\d{1,2}),\s+(\d{4})"
)
MONTHS = {
    m: n
    for n, m in enumerate(
        [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ],
        start=1,
    )
}
STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "from",
        "with",
        "and",
        "or",
        "but",
        "as",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "this",
        "that",
        "these",
        "those",
        "it",
        "its",
        "their",
        "his",
        "her",
        "they",
        "them",
        "he",
        "she",
        "who",
        "whom",
        "whose",
        "which",
        "what",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "done",
        "would",
        "will",
        "can",
        "could",
        "should",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "not",
        "no",
        "so",
        "than",
        "then",
        "there",
        "here",
        "into",
        "about",
        "over",
        "after",
        "before",
        "between",
        "according",
        "many",
        "much",
        "days",
        "day",
        "passed",
        "gave",
        "set",
        "date",
        "per",
    )
)
COVERAGE = 0.9  # share of the question's content words the supporting sentences must hold
MOMENT_COVERAGE = 0.6  # share of a time-span moment's words its dated sentence must hold


@dataclass
class Choice:
    index: int
    rationale: str


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    w = word.lower().strip("'’")
    for suffix in ("ing", "ed", "es", "e", "s"):
        if len(w) > 4 and w.endswith(suffix):
            return w[: -len(suffix)]
    return w


@lru_cache(maxsize=100_000)
def content(text: str) -> frozenset[str]:
    return frozenset(stem(w) for w in WORD.findall(text) if w.lower() not in STOP)


@lru_cache(maxsize=100_000)
def names(text: str) -> frozenset[str]:
    """Capitalised word runs that look like names: leading function words and month names dropped, and a lone
    capitalised word opening the sentence ("Critics of …", "Jaws dropped …") is not taken for a name."""
    found: set[str] = set()
    for match in NAME.finditer(text):
        words = match.group(0).split()
        while words and (words[0].lower() in STOP or words[0] in MONTHS):
            words = words[1:]
        if not words or (len(words) == 1 and match.start() == 0):
            continue
        found.add(" ".join(words))
    return frozenset(found)


def sentences(passages: list[str]) -> list[str]:
    """Lines (headline, paragraphs) first, so a headline never runs into the sentence after it."""
    return [s.strip() for p in passages for line in p.splitlines() for s in SENTENCE_END.split(line) if s.strip()]


def choose(question: str, options: list[str], passages: list[str]) -> Choice:
    deflect = options.index(UNANSWERABLE) if UNANSWERABLE in options else len(options) - 1
    found = sentences(passages)
    if question.lower().startswith("how many days"):
        return _time_span(question, options, found, deflect)
    return _supported(question, options, found, deflect)


def _time_span(question: str, options: list[str], found: list[str], deflect: int) -> Choice:
    body = re.sub(r"^how many days passed between\s+", "", question.rstrip("?"), flags=re.I)
    dated = [(s, date_in(s)) for s in found if DATE.search(s)]
    best: tuple[float, int | None, str] = (0.0, None, "")
    for cut in [m.start() for m in re.finditer(r"\s+and\s+", body)]:
        first, second = body[:cut], re.sub(r"^\s+and\s+", "", body[cut:])
        (score_a, day_a, s_a), (score_b, day_b, s_b) = _moment(first, dated), _moment(second, dated)
        score = min(score_a, score_b)
        if score > best[0] and day_a and day_b:
            best = (score, abs((day_b - day_a).days), f"{s_a} | {s_b}")
    score, days, why = best
    if days is None or score < MOMENT_COVERAGE:
        return Choice(deflect, f"no dated sentences for both moments (best coverage {score:.2f})")
    for i, option in enumerate(options):
        if option.lower().split()[0] == str(days):
            return Choice(i, f"{days} days between: {why}")
    return Choice(deflect, f"{days} days is not among the options ({why})")


def _moment(phrase: str, dated: list[tuple[str, dt.date | None]]) -> tuple[float, dt.date | None, str]:
    want = content(phrase)
    if not want or not dated:
        return 0.0, None, ""
    scored = [(len(want & content(s)) / len(want), day, s) for s, day in dated]
    return max(scored, key=lambda x: x[0])


def date_in(sentence: str) -> dt.date | None:
    match = DATE.search(sentence)
    if not match:
        return None
    try:
        return dt.date(int(match.group(3)), MONTHS[match.group(1)], int(match.group(2)))
    except ValueError:
        return None


def _supported(question: str, options: list[str], found: list[str], deflect: int) -> Choice:
    asked = content(question)
    if not asked:
        return Choice(deflect, "the question has no content words")
    best = (0.0, deflect, "")
    for i, option in enumerate(options):
        if i == deflect:
            continue
        for answer_sentence in (s for s in found if option.lower() in s.lower()):
            coverage, bridge = _coverage(asked - content(option), answer_sentence, found)
            if coverage > best[0]:
                best = (coverage, i, f"{answer_sentence} | {bridge}")
    coverage, index, why = best
    if coverage < COVERAGE:
        return Choice(deflect, f"evidence covers {coverage:.0%} of the question" + (f" at best ({why})" if why else ""))
    return Choice(index, why)


def _coverage(asked: AbstractSet[str], answer_sentence: str, found: list[str]) -> tuple[float, str]:
    if not asked:
        return 1.0, ""
    named = names(answer_sentence)
    base = content(answer_sentence)
    best, bridge = len(asked & base) / len(asked), ""
    for other in found:
        if other is answer_sentence or not named & names(other):
            continue
        share = len(asked & (base | content(other))) / len(asked)
        if share > best:
            best, bridge = share, other
    return best, bridge
