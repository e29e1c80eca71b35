"""Within one article: short forms resolve to the full mention they abbreviate.

"Leto" → "Jared Leto", "Karl's" → "Karl Lagerfeld" (any token of a fuller person name, possessive and titles
off), "NASA" → "National Aeronautics and Space Administration" (initials), "Microsoft" → "Microsoft Corp"
(an organisation's leading words). A short form that fits two different full names stays on its own."""

from __future__ import annotations

from dataclasses import dataclass

from extract.entities.names import clean_name, initials, name_key, tokens_of
from extract.entities.types import PERSON_CONFUSIONS


@dataclass(frozen=True)
class Canonical:
    name: str
    type: str
    explanation: str = ""


def _person_match(short: list[str], full: Canonical) -> bool:
    return full.type == "PERSON" and len(tokens_of(full.name)) > len(short) and set(short) <= set(tokens_of(full.name))


def _org_match(name: str, short: list[str], full: Canonical) -> bool:
    if full.type != "ORG" or len(tokens_of(full.name)) <= len(short):
        return False
    acronym = name.isupper() and len(name) >= 2 and initials(full.name) == name.lower()
    return acronym or tokens_of(full.name)[: len(short)] == short


def resolve(name: str, kind: str, fulls: list[Canonical]) -> Canonical:
    """The canonical form of one mention given the full mentions of its article."""
    name = clean_name(name)
    short = tokens_of(name)
    matches = {}
    for full in fulls:
        person = kind in PERSON_CONFUSIONS and _person_match(short, full)
        if person or (kind == "ORG" and _org_match(name, short, full)):
            matches.setdefault(name_key(full.name), full)
    if len(matches) == 1:
        full = next(iter(matches.values()))
        return Canonical(full.name, full.type, f"within the article, {name!r} abbreviates {full.name!r}")
    if len(matches) > 1:
        options = ", ".join(sorted(m.name for m in matches.values()))
        return Canonical(name, kind, f"{name!r} is ambiguous within the article ({options}); kept on its own")
    return Canonical(name, kind, "")


def full_forms(names_and_types: list[tuple[str, str]]) -> list[Canonical]:
    """The mentions that can serve as full forms: people with two or more name tokens, any organisation."""
    fulls = {}
    for name, kind in names_and_types:
        name = clean_name(name)
        if (kind == "PERSON" and len(tokens_of(name)) > 1) or (kind == "ORG" and len(tokens_of(name)) > 1):
            fulls.setdefault(name_key(name), Canonical(name, kind))
    return list(fulls.values())
