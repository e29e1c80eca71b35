"""Type evidence beyond the model's label: first names (PERSON, with their usual gender), the words that end an
organisation's name ("Harbour Trust", "Acme Corp"), and the nouns that describe an entity ("Choupette, Karl
Lagerfeld's beloved cat", "the singer", "the company").

The first-name list is `data/first_names.txt`, derived from Faker's en_US person provider (MIT licence; the US
census- and SSA-based lists): shipped with the project, so every machine types the same way."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


def _words(text: str) -> list[str]:
    return text.split()


# The last word of an organisation's name: a mention ending so is never a PERSON.
ORG_DESIGNATORS = frozenset(
    _words(
        """
        inc corp corporation co company ltd llc plc gmbh ag sa group holdings partners trust fund foundation
        association institute university college academy school council committee commission agency
        authority board bureau office ministry department party union league federation society club labs
        laboratories technologies systems networks media news times press records studios pictures airlines
        airways motors bank bancorp capital ventures industries enterprises international alliance coalition
        church hospital fc cooperative collective consortium guild initiative network organisation
        organization project services solutions
        """
    )
)
# The last word of a company's full legal name: what its short form leaves off ("Ford" of "Ford Motor Company").
# A longer name ending otherwise is a part, product or team of the shorter one's organisation ("ESA Topical Team").
LEGAL_FORMS = frozenset(
    _words("inc incorporated corp corporation co company ltd limited llc plc gmbh ag sa nv bv se spa group holdings")
)
# The last word of a place's name: never a PERSON either (the first-name rule keeps off these).
PLACE_DESIGNATORS = frozenset(
    _words(
        """
        street st avenue ave road rd boulevard lane square park beach heights hills county city town village
        valley river lake bay island islands mountain mountains station airport bridge harbour harbor port
        center centre arena stadium hall district province state drive way court
        """
    )
)
# Nouns that say what a named thing is, as an appositive ("Choupette, Lagerfeld's cat") or a definite
# description ("the singer"): noun → type.
DESCRIPTION_NOUNS: dict[str, str] = {
    **dict.fromkeys(
        _words(
            """
        singer actor actress rapper designer president minister founder director spokesman spokeswoman
        spokesperson senator player coach author writer artist musician star chef lawyer governor mayor
        chairman chairwoman executive leader secretary analyst professor scientist economist journalist
        reporter editor stylist comedian producer filmmaker photographer athlete footballer striker
        goalkeeper candidate politician activist wife husband son daughter mother father brother sister
        manager owner model songwriter dancer drummer guitarist billionaire entrepreneur ceo
        """
        ),
        "PERSON",
    ),
    **dict.fromkeys(
        _words(
            """
        company firm organisation organization agency startup start-up bank maker retailer manufacturer
        brand label network publisher carrier airline broadcaster charity nonprofit union party team club
        band conglomerate ministry regulator lender insurer newspaper magazine automaker carmaker chipmaker
        """
        ),
        "ORG",
    ),
    **dict.fromkeys(
        _words(
            """
        city town country village region province capital island
        """
        ),
        "PLACE",
    ),
    # A named animal is none of the kept types (NEON's Choupette): typed OTHER, never ORG or PERSON.
    **dict.fromkeys(
        _words(
            """
        cat dog horse pet kitten puppy pony parrot racehorse
        """
        ),
        "OTHER",
    ),
}


@lru_cache(maxsize=1)
def first_names() -> dict[str, str]:
    """Case-folded first name → its usual gender: "F", "M" or "FM"."""
    text = resources.files("newskg.extract.entities").joinpath("data/first_names.txt").read_text(encoding="utf-8")
    names: dict[str, str] = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, gender = line.split("\t")
            names[name.casefold()] = gender
    return names


def gender_of(name_tokens: list[str]) -> str:
    """ "F", "M", "FM" (either) or "" (unknown) from a person's first name token (case-folded)."""
    return first_names().get(name_tokens[0], "") if name_tokens else ""


# The last word of an event's or a work's name ("Davis Cup", "Eras Tour"): no PERSON either.
EVENT_DESIGNATORS = frozenset(
    _words("cup tour open games championship championships festival awards award prize series trophy gala")
)


def person_by_first_name(name_tokens: list[str]) -> bool:
    """Two or three name words, the first a known first name, the last no organisation or place word."""
    return (
        1 < len(name_tokens) <= 3
        and name_tokens[0] in first_names()
        and name_tokens[-1] not in ORG_DESIGNATORS
        and name_tokens[-1] not in PLACE_DESIGNATORS
        and name_tokens[-1] not in EVENT_DESIGNATORS
    )


def org_by_designator(name_tokens: list[str]) -> bool:
    return len(name_tokens) > 1 and (
        name_tokens[-1] in ORG_DESIGNATORS or name_tokens[0] in {"university", "ministry", "bank", "department"}
    )
