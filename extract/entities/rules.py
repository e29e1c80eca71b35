"""Which entity rules run around the spaCy model, one switch each, so an evaluation can measure every rule's
contribution (`newskg eval entities`: before and after each rule, enabled in field order).

All on is what the extract stage runs; `EntityRules.none()` is the plain model plus linking."""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class EntityRules:
    # Extend a model entity over a trailing proper noun the model split off ("Anna" + "Wintour").
    widen_split_names: bool = True
    # A lone proper noun that repeats a token of a person named in full earlier ("Leto" after "Jared Leto").
    repeat_person_tokens: bool = True
    # Short forms resolve to the full form of the same article ("Leto" → "Jared Leto", "NASA" → its full name).
    short_form_coref: bool = True

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))

    @classmethod
    def none(cls) -> EntityRules:
        return cls(**dict.fromkeys(cls.names(), False))

    def with_rules(self, *names: str) -> EntityRules:
        return replace(self, **dict.fromkeys(names, True))
