"""Name normalisation for linking: possessives and honorifics off, a comparison key, digits and initials."""

from __future__ import annotations

import re
import unicodedata

TITLES = {
    "mr",
    "mrs",
    "ms",
    "miss",
    "mx",
    "dr",
    "prof",
    "professor",
    "sir",
    "dame",
    "lord",
    "lady",
    "rev",
    "fr",
    "president",
    "vice",
    "prime",
    "minister",
    "pm",
    "senator",
    "sen",
    "rep",
    "representative",
    "gov",
    "governor",
    "mayor",
    "judge",
    "justice",
    "gen",
    "general",
    "col",
    "capt",
    "captain",
    "lt",
    "sgt",
    "ceo",
    "chairman",
    "chairwoman",
    "king",
    "queen",
    "prince",
    "princess",
    "pope",
    "saint",
    "st",
    "chancellor",
    "secretary",
    "ambassador",
    "coach",
    "chief",
    "officer",
    "director",
    "dj",
    "the",
}
# Words that end many misread "person" names ("Mohegan Sun Arena July"): never a surname.
CALENDAR_WORDS = frozenset(
    (
        "january",
        "february",
        "march",
        "april",
        "may",
        "june",
        "july",
        "august",
        "september",
        "october",
        "november",
        "december",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
        "sunday",
    )
)
_POSSESSIVE = re.compile(r"(?:['’]s|['’])$", re.IGNORECASE)
_NON_WORD = re.compile(r"[^\w\s]+")
_SPACE = re.compile(r"\s+")
_DIGITS = re.compile(r"\d+")


def strip_possessive(name: str) -> str:
    return _POSSESSIVE.sub("", name.strip()).strip()


def strip_titles(name: str) -> str:
    """Leading honorifics and titles off ('President Joe Biden' → 'Joe Biden'), never the whole name."""
    words = name.split()
    while len(words) > 1 and words[0].lower().rstrip(".") in TITLES:
        words = words[1:]
    return " ".join(words)


def clean_name(surface: str) -> str:
    """The display form of a mention: whitespace folded, quotes, possessive and titles off."""
    name = _SPACE.sub(" ", surface.replace("\n", " ")).strip(" \"'“”‘’,.;:()[]")
    return strip_titles(strip_possessive(name))


def name_key(name: str) -> str:
    """Comparison key: NFKC, case-folded, punctuation off; digits and codes kept as they are."""
    text = unicodedata.normalize("NFKC", clean_name(name)).casefold()
    return _SPACE.sub(" ", _NON_WORD.sub(" ", text)).strip()


def digits_of(name: str) -> tuple[str, ...]:
    return tuple(_DIGITS.findall(name))


def initials(name: str) -> str:
    words = [w for w in name_key(name).split() if w not in {"of", "the", "and", "for", "de", "la"}]
    return "".join(w[0] for w in words)


def tokens_of(name: str) -> list[str]:
    return name_key(name).split()
