"""Within one article: short forms resolve to the full mention they abbreviate.

"Leto" → "Jared Leto", "Karl's" → "Karl Lagerfeld" (any token of a fuller person name, possessive and titles
off), "NASA" → "National Aeronautics and Space Administration" (initials), "Microsoft" → "Microsoft Corp"
(an organisation's leading words, when the full name ends in a legal form: "ESA" is not "ESA Topical Team", nor
"Amazon" "Amazon Web Services"). A short form that fits two different full names stays on its own."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from newskg.extract.entities.evidence import LEGAL_FORMS
from newskg.extract.entities.names import clean_name, initials, name_key, tokens_of
from newskg.extract.entities.types import PERSON_CONFUSIONS


@dataclass(frozen=True)
class Canonical:
    name: str
    type: str
    explanation: str = ""


def _person_match(short: list[str], full: Canonical) -> bool:
    return full.type == "PERSON" and len(tokens_of(full.name)) > len(short) and set(short) <= set(tokens_of(full.name))


def _org_match(name: str, short: list[str], full: Canonical) -> bool:
    words = tokens_of(full.name)
    if full.type != "ORG" or len(words) <= len(short):
        return False
    acronym = name.isupper() and len(name) >= 2 and initials(full.name) == name.lower()
    return acronym or (words[: len(short)] == short and words[-1] in LEGAL_FORMS)


def resolve(name: str, kind: str, fulls: list[Canonical]) -> Canonical:
    """The canonical form of one mention given the full mentions of its article."""
    name = clean_name(name)
    short = tokens_of(name)
    matches: dict[str, Canonical] = {}
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
    fulls: dict[str, Canonical] = {}
    for name, kind in names_and_types:
        name = clean_name(name)
        if (kind == "PERSON" and len(tokens_of(name)) > 1) or (kind == "ORG" and len(tokens_of(name)) > 1):
            fulls.setdefault(name_key(name), Canonical(name, kind))
    return list(fulls.values())


# Pronouns and the entities they can stand for: (type, gender it excludes).
PRONOUNS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(("she", "her", "hers", "herself"), ("PERSON", "M")),
    **dict.fromkeys(("he", "him", "his", "himself"), ("PERSON", "F")),
    **dict.fromkeys(("it", "its", "itself"), ("ORG", "")),
}
SENTENCES_BACK = 2  # an antecedent is in the pronoun's sentence or the two before it


@dataclass(frozen=True)
class Antecedent:
    token: int  # the first token of the mention in the chunk
    sentence: int
    entity_id: str
    name: str
    type: str
    gender: str  # "F", "M", "FM" or "" (unknown)


@dataclass(frozen=True)
class Reference:
    """A pronoun or definite description resolved to the one compatible entity before it."""

    start: int  # character offsets
    end: int
    text: str
    antecedent: Antecedent
    method: str  # pronoun | description
    explanation: str


def _compatible(candidate: Antecedent, kind: str, excluded_gender: str) -> bool:
    return candidate.type == kind and not (excluded_gender and candidate.gender == excluded_gender)


def _one_before(
    antecedents: list[Antecedent], token: int, sentence: int, kind: str, excluded_gender: str
) -> tuple[Antecedent | None, str]:
    """The one compatible entity mentioned before `token` in the last sentences; None (with why) when there is
    none or more than one, so an uncertain reference stays unresolved."""
    window = [a for a in antecedents if a.token < token and sentence - SENTENCES_BACK <= a.sentence <= sentence]
    compatible = [a for a in window if _compatible(a, kind, excluded_gender)]
    entities = {a.entity_id for a in compatible}
    if len(entities) != 1:
        return None, "none" if not entities else "ambiguous"
    if kind == "ORG" and any(a.type not in {"ORG", "PERSON"} for a in window):
        return None, "ambiguous"  # "it" could be a product, a place or an event just as well
    return max(compatible, key=lambda a: a.token), ""


def _is_referring_it(token: Token) -> bool:
    """ "it"/"its" as an organisation: a possessive, or the subject of a full verb (not "it is …", "it seems")."""
    if token.lower_ == "its":
        return True
    return (
        token.dep_ in {"nsubj", "nsubjpass"}
        and token.head.pos_ == "VERB"
        and token.head.lower_ not in {"seem", "seems", "seemed"}
    )


def resolve_pronouns(doc: Doc, antecedents: list[Antecedent], taken: set[int]) -> list[Reference]:
    found: list[Reference] = []
    sentence_of = _sentence_index(doc)
    for token in doc:
        rule = PRONOUNS.get(token.lower_)
        if rule is None or token.pos_ != "PRON" or token.i in taken:
            continue
        kind, excluded = rule
        if kind == "ORG" and not _is_referring_it(token):
            continue
        chosen, _ = _one_before(antecedents, token.i, sentence_of[token.i], kind, excluded)
        if chosen is None:
            continue
        why = (
            f"{token.text!r} refers to {chosen.name!r}, the one "
            f"{'organisation' if kind == 'ORG' else 'compatible person'} of the last {SENTENCES_BACK + 1} sentences"
        )
        found.append(Reference(token.idx, token.idx + len(token.text), token.text, chosen, "pronoun", why))
    return found


def resolve_descriptions(
    doc: Doc, antecedents: list[Antecedent], taken: set[int], nouns: dict[str, str]
) -> list[Reference]:
    """ "the singer" → the one PERSON, "the company" → the one ORG of the last sentences. Only a bare "the" +
    noun ("the German designer" may be someone else), never part of a name or described by one."""
    found: list[Reference] = []
    sentence_of = _sentence_index(doc)
    for token in doc:
        kind = nouns.get(token.lower_)
        if kind not in {"PERSON", "ORG"} or token.pos_ != "NOUN" or token.i in taken or token.i == 0:
            continue
        children = list(token.children)
        if [c.lower_ for c in children] != ["the"] or doc[token.i - 1].lower_ != "the":
            continue
        if token.dep_ in {"compound", "appos"} or token.head.i in taken:
            continue  # "the singer Doja Cat", "Choupette, the cat": the name is right there
        chosen, _ = _one_before(antecedents, token.i, sentence_of[token.i], kind, "")
        if chosen is None:
            continue
        start = doc[token.i - 1]
        why = f"'the {token.text}' refers to {chosen.name!r}, the one {kind} of the last {SENTENCES_BACK + 1} sentences"
        found.append(
            Reference(
                start.idx, token.idx + len(token.text), doc[token.i - 1 : token.i + 1].text, chosen, "description", why
            )
        )
    return found


def _sentence_index(doc: Doc) -> dict[int, int]:
    return {t.i: n for n, sent in enumerate(doc.sents) for t in sent}
