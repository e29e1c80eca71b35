"""IRB's rules, the pure parts (paper §3.2.2 and Appendix A.1, Tables 8 and 9, in our own words).

Masking: a node may be the answer when it is a named entity, is named in every keypoint of its claim, stands for
one entity (no "and", "&", "et al"), is not contained in another node of the claim (fuzzy against the entity and
date nodes; against the keypoint's arguments, not written inside a longer capitalised name), and is the unique
answer of its question (that last one is a Cypher count as of the day, in generate.py).

Paraphrase (Table 8): a person's first and middle names shortened to initials ("Cristiano Ronaldo" → "C. Ronaldo"),
a date written relative to the reference date (the as-of day: "12 days ago"), numbers spelled out ("twelve days
ago", and the keypoint's own numbers: "2,400 workers" → "two thousand four hundred workers"). False premise
(Table 9): a person's surname swapped for another ("C. Smith"), a relative date distorted ("40 days ago" for a
fact 12 days old); generate.py keeps one only when the graph confirms it false."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass

from rapidfuzz import fuzz

from newskg.core.timeaxes import day_from_key

NAMED_TYPES = frozenset({"person", "per", "organization", "organisation", "org", "gpe", "location", "loc", "norp"})
PERSON_TYPES = frozenset({"person", "per"})
CONJUNCTIONS = re.compile(r"(\band\b|&|\bet al\b|\bund\b|\bet\b(?= ))", re.IGNORECASE)
NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
WORD_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?!\w)")  # a number standing alone ("60", not "60fps")
ARTICLES = frozenset({"The", "A", "An"})  # a capitalised word before a name that is not part of it
OVERLAP_SCORE = 90.0  # rapidfuzz partial_ratio at or above which one node's text is "contained" in another's
SURNAMES = (
    "Smith", "Johnson", "Brown", "Garcia", "Miller", "Davis", "Wilson", "Moore", "Taylor", "Anderson", "Thomas",
    "Martin", "Clark", "Lewis", "Walker", "Hall", "Young", "King", "Wright", "Scott", "Green", "Baker", "Adams",
)  # fmt: skip


@dataclass(frozen=True)
class Node:
    """One node of a claim's graph: an entity (with its linker type) or a literal (a date, a number)."""

    text: str
    entity_type: str | None  # None: not an entity (a date or a quantity)


def is_named_entity(node: Node) -> bool:
    """Named: an entity the linker typed as a person, organisation or place, written with a capital letter."""
    kind = (node.entity_type or "").lower()
    return kind in NAMED_TYPES and node.text[:1].isupper() and not NUMBER.fullmatch(node.text)


def in_every_keypoint(node: Node, keypoints: Sequence[str]) -> bool:
    """Coverage: the node is named in every keypoint of the claim."""
    needle = node.text.lower()
    return bool(keypoints) and all(needle in k.lower() for k in keypoints)


def is_atomic(node: Node) -> bool:
    """Atomic: the node stands for one entity, not a list joined by a conjunction."""
    return not CONJUNCTIONS.search(node.text)


def overlaps(node: Node, others: Sequence[Node]) -> bool:
    """Non-overlapping fails when the node's text is (fuzzily) contained in another node's text."""
    text = node.text.lower()
    for other in others:
        if other is node or (other.text.lower() == text and other.entity_type == node.entity_type):
            continue
        longer = other.text.lower()
        if len(text) <= len(longer) and fuzz.partial_ratio(text, longer) >= OVERLAP_SCORE:
            return True
    return False


def mask_rejection(node: Node, others: Sequence[Node], keypoints: Sequence[str]) -> str | None:
    """Why the node cannot be masked by the local rules (None: it can; uniqueness is checked against the graph)."""
    if not is_named_entity(node):
        return "mask_not_named_entity"
    if not in_every_keypoint(node, keypoints):
        return "mask_not_in_every_keypoint"
    if not is_atomic(node):
        return "mask_not_atomic"
    if overlaps(node, others):
        return "mask_overlaps_other_node"
    return None


def is_person(entity_type: str | None) -> bool:
    return (entity_type or "").lower() in PERSON_TYPES


def short_name(name: str) -> str | None:
    """ "Cristiano Ronaldo" → "C. Ronaldo"; None when there is nothing to shorten (one word)."""
    words = name.split()
    if len(words) < 2 or not all(w[:1].isalpha() for w in words[:-1]):
        return None
    return " ".join(f"{w[0].upper()}." for w in words[:-1]) + f" {words[-1]}"


def swapped_surname(name: str, rng: random.Random) -> str | None:
    """ "Cristiano Ronaldo" → "C. Smith": initials kept, the surname replaced by another one."""
    words = name.split()
    if len(words) < 2:
        return None
    choices = [s for s in SURNAMES if s.lower() != words[-1].lower()]
    return " ".join(f"{w[0].upper()}." for w in words[:-1]) + f" {rng.choice(choices)}"


def days_ago(event_day: int, reference_day: int) -> int:
    return (day_from_key(reference_day) - day_from_key(event_day)).days


def relative_date(days: int, spelled: bool = False) -> str:
    """A day as its distance from the reference date, exact to the day (so the answer stays unique)."""
    if days == 0:
        return "today"  # the reference day is the question's "As of ..." day
    count = spell_number(days) if spelled else str(days)
    return f"{count} day{'s' if days != 1 else ''} ago"


def distorted_days(days: int, rng: random.Random) -> int:
    """A different distance, far enough not to read as a rounding of the true one (at least 30 days off)."""
    shift = rng.randint(30, 400)
    if days - shift >= 1 and rng.random() < 0.5:
        return days - shift
    return days + shift


_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES = ((1_000_000_000, "billion"), (1_000_000, "million"), (1_000, "thousand"), (100, "hundred"))


def spell_number(value: int) -> str:
    """Verbalisation (Table 8's quantity rule) of a whole number: 1234 → "one thousand two hundred thirty-four"."""
    if value < 0:
        return "minus " + spell_number(-value)
    if value < 20:
        return _ONES[value]
    if value < 100:
        tens, ones = divmod(value, 10)
        return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")
    for scale, word in _SCALES:
        if value >= scale:
            head, rest = divmod(value, scale)
            return f"{spell_number(head)} {word}" + (f" {spell_number(rest)}" if rest else "")
    raise AssertionError("unreachable")


def spelled_number_text(number: str) -> str:
    """One number as written ("2,500", "3.5", "12") in words; as written when it is no plain number ("1.2.3")."""
    whole, _, fraction = number.replace(",", "").partition(".")
    if not whole.isdigit() or (fraction and not fraction.isdigit()) or "." in fraction:
        return number
    words = spell_number(int(whole))
    return words + (" point " + " ".join(_ONES[int(d)] for d in fraction) if fraction else "")


def spelled_numbers(text: str) -> str:
    """Every number of the text spelled out (Table 8's quantity rule): "cut 2,400 jobs" → "cut two thousand four
    hundred jobs"."""
    return WORD_NUMBER.sub(lambda m: spelled_number_text(m.group(0)), text)


def embedded_in_longer_name(name: str, text: str) -> bool:
    """Non-overlapping against the keypoint's arguments: the name is written inside a longer capitalised name
    ("Apple" in "Apple Music subscribers"), so masking it would leave the rest of that name in the question."""
    for found in re.finditer(re.escape(name), text, re.IGNORECASE):
        before, after = text[: found.start()].split(), text[found.end() :].split()
        if found.end() < len(text) and text[found.end()].isalnum():
            return True  # part of a longer word
        if after and after[0][:1].isupper() and after[0][:1].isalpha():
            return True
        if before and before[-1][:1].isupper() and before[-1].isalpha() and before[-1] not in ARTICLES:
            return True
    return False


def numbers_in(text: str, standalone: bool = False) -> list[str]:
    """The numbers a keypoint states, as written ("2,500", "3.5"); `standalone`: only those that are a word of
    their own (the ones spelled out)."""
    return (WORD_NUMBER if standalone else NUMBER).findall(text)


def passage_rejection(names: Sequence[str], keypoint: str, passage: str) -> str | None:
    """A keypoint is supported by a passage when the passage names its entities and states its numbers."""
    if not passage.strip():
        return "passage_empty"
    lowered = passage.lower()
    if any(name.lower() not in lowered for name in names):
        return "passage_missing_name"
    if any(number not in passage for number in numbers_in(keypoint)):
        return "passage_missing_number"
    return None
