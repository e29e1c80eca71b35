"""Across documents: the alias index of known entities (from the graph, or a user-supplied KB).

Lookup order: the normalised name or a recorded alias exactly (never missed, whatever the type), an
organisation's recorded acronym, then a rapidfuzz match of the same type, accepted only when the digits agree
(so "SR-2023-052" never becomes "SR-2023-053") and the contexts overlap or the names are nearly identical."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from extract.entities.names import CALENDAR_WORDS, digits_of, initials, name_key
from extract.entities.types import PERSON_CONFUSIONS

FUZZY_CUTOFF = 88.0
NEAR_IDENTICAL = 95.0
MIN_CONTEXT_OVERLAP = 0.05
CONTEXT_WORDS_KEPT = 300


@dataclass
class KnownEntity:
    id: str
    name: str
    type: str
    aliases: set[str] = field(default_factory=set)
    context: set[str] = field(default_factory=set)
    mentions: int = 0
    description: str | None = None


@dataclass(frozen=True)
class LinkDecision:
    entity_id: str
    method: str  # exact | alias | acronym | fuzzy
    score: float
    explanation: str


class AliasIndex:
    def __init__(self) -> None:
        self.entities: dict[str, KnownEntity] = {}
        self._by_key: dict[str, set[str]] = defaultdict(set)
        self._by_acronym: dict[str, set[str]] = defaultdict(set)
        self._keys_by_type: dict[str, set[str]] = defaultdict(set)
        self._person_parts: dict[str, set[str]] = defaultdict(set)  # surname of a full person name → ids

    def __len__(self) -> int:
        return len(self.entities)

    def add(self, entity_id: str, name: str, kind: str, aliases: list[str] | set[str] = (),
            context: set[str] | None = None, mentions: int = 1, description: str | None = None) -> KnownEntity:
        entity = self.entities.get(entity_id)
        if entity is None:
            entity = self.entities[entity_id] = KnownEntity(entity_id, name, kind, description=description)
            self._index_key(entity, name)
            words = name_key(name).split()
            if kind == "ORG" and len(words) > 1:
                self._by_acronym[initials(name)].add(entity_id)
            if kind == "PERSON" and len(words) > 1 and words[-1] not in CALENDAR_WORDS:
                # Surnames only: across documents a lone first name ("Karl") is too common to trust.
                self._person_parts[words[-1]].add(entity_id)
        entity.mentions += mentions
        for alias in aliases:
            self.add_alias(entity_id, alias)
        if context:
            entity.context = set(list(entity.context | context)[-CONTEXT_WORDS_KEPT:])
        return entity

    def add_alias(self, entity_id: str, alias: str) -> None:
        entity = self.entities[entity_id]
        if name_key(alias) and alias not in entity.aliases:
            entity.aliases.add(alias)
            self._index_key(entity, alias)

    def _index_key(self, entity: KnownEntity, name: str) -> None:
        key = name_key(name)
        if key:
            self._by_key[key].add(entity.id)
            self._keys_by_type[entity.type].add(key)

    def lookup(self, name: str, kind: str, context: set[str] | None = None) -> LinkDecision | None:
        key = name_key(name)
        if not key:
            return None
        if key in self._by_key:
            return self._best(self._by_key[key], kind, "exact", 100.0, f"{name!r} is a recorded name or alias")
        compact = key.replace(" ", "")
        if name.strip().isupper() and compact in self._by_acronym:
            return self._best(self._by_acronym[compact], kind, "acronym", 100.0, f"{name!r} is the acronym")
        people = self._person_parts.get(key, set())
        if " " not in key and kind in PERSON_CONFUSIONS and len(people) == 1:
            return self._best(people, "PERSON", "surname", 90.0, f"{name!r} is the surname of the one known person")
        return self._fuzzy(name, key, kind, context or set())

    def person_name_parts(self) -> set[str]:
        """Surnames of exactly one known person: a lone proper noun equal to one is worth a mention."""
        return {part for part, ids in self._person_parts.items() if len(ids) == 1}

    def _best(self, ids: set[str], kind: str, method: str, score: float, why: str) -> LinkDecision:
        same_type = [i for i in ids if self.entities[i].type == kind]
        pool = same_type or list(ids)
        chosen = max(pool, key=lambda i: (self.entities[i].mentions, i))
        entity = self.entities[chosen]
        note = "" if len(pool) == 1 else f"; most mentioned of {len(pool)} candidates"
        return LinkDecision(chosen, method, score, f"{why} of {entity.name!r} ({entity.type}){note}")

    def _fuzzy(self, name: str, key: str, kind: str, context: set[str]) -> LinkDecision | None:
        choices = self._keys_by_type.get(kind)
        if not choices:
            return None
        for candidate, score, _ in process.extract(key, list(choices), scorer=fuzz.token_sort_ratio,
                                                   score_cutoff=FUZZY_CUTOFF, limit=5):
            if digits_of(candidate) != digits_of(key):
                continue  # names that differ in digits or codes are different things
            for entity_id in self._by_key[candidate]:
                entity = self.entities[entity_id]
                if entity.type != kind:
                    continue
                overlap = _jaccard(context, entity.context)
                if score >= NEAR_IDENTICAL or overlap >= MIN_CONTEXT_OVERLAP:
                    return LinkDecision(entity_id, "fuzzy", score,
                                        f"{name!r} ~ {entity.name!r} (similarity {score:.0f}, context overlap "
                                        f"{overlap:.2f}, same type {kind})")
        return None


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
