"""Which entity rules run around the spaCy model, one switch each, so an evaluation can measure every rule's
contribution (`newskg eval entities`: before and after each rule, enabled in field order).

The defaults are what the extract stage runs; `EntityRules.none()` is the plain model plus linking. A rule that
lowered mention F1 on the held-out half of the gold set (`newskg eval entities --split test`, leave-one-out from
the defaults) is off by default and still measured: `tidy_spans`. `known_names` and `coordinated_names` lost
there too but stay on: issue 16's Doja Cat goal (both "Jared Leto" found) needs them."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class EntityRules:
    # Extend a model entity over a trailing proper noun the model split off ("Anna" + "Wintour").
    widen_split_names: bool = True
    # A model span trimmed to the name: no leading lower-case word, nationality or title before a first name
    # ("rookie Emil Bemstrom", "Australian Timothy Weeks"), no trailing punctuation, conjunction, title or
    # lower-case noun ("Kim Kardashian -", "Zabul province"); cut before a verb inside ("Garrett hit Rudolph"),
    # split at a possessive before a longer name ("Jeff Bezos's Blue Origin"); titles alone are no mention.
    tidy_spans: bool = False
    # A lone proper noun that repeats a token of a person named in full earlier ("Leto" after "Jared Leto").
    repeat_person_tokens: bool = True
    # Short forms resolve to the full form of the same article ("Leto" → "Jared Leto", "NASA" → its full name).
    short_form_coref: bool = True
    # A name recognised anywhere earlier in the stream (the alias index as of the chunk, the article so far, the
    # chunk's own model mentions) is recognised wherever it appears after, whatever the model says there.
    # Held-out F1 -0.003 (type accuracy -0.013), dev +0.012; on all the same: the second "Jared Leto" of the Doja
    # Cat passage (an issue 16 goal) is found only by it.
    known_names: bool = True
    # A capitalised proper-noun run coordinated with or appositive to a recognised entity ("Doja Cat and Jared
    # Leto") is a mention too.
    coordinated_names: bool = True
    # A capitalised plural proper noun after "the" that the model left untagged is an organisation: teams and
    # bands ("the Islanders", "The Panthers are 6-2-1").
    plural_names_after_the: bool = True
    # Two or three name words starting with a known first name ("Jared Leto") are a PERSON, whatever the model said.
    first_name_person: bool = True
    # A "person" whose last word names an organisation ("Harbour Trust", "Acme Corp") is an ORG.
    org_designators: bool = True
    # An appositive noun says what a name is: "Choupette, Karl Lagerfeld's beloved cat" is no ORG.
    appositive_types: bool = True
    # The subject of a sentence that a later "she"/"his" of the same sentence can only refer to is a PERSON.
    pronoun_person_evidence: bool = True
    # A PERSON or ORG mention that a logistic model over its shape and parse (name_check.py, fitted and measured
    # by bench/fit_names.py) scores below its threshold is no mention: a product ("Stadia"), a common word at a
    # sentence's start ("Meth"), a place, an event or a fragment.
    name_check: bool = True
    # An entity's type is the weighted majority of its mentions' types so far (as of the chunk), not its first.
    type_vote: bool = True
    # "she"/"he" (and "it"/"its" for an organisation) resolve to the one compatible entity of the last sentences.
    pronoun_coref: bool = True
    # "the singer", "the company" resolve to the one compatible entity of the last sentences.
    description_coref: bool = True

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def none(cls) -> EntityRules:
        return cls(**dict.fromkeys(cls.names(), False))

    def with_rules(self, *names: str) -> EntityRules:
        return replace(self, **dict.fromkeys(names, True))
