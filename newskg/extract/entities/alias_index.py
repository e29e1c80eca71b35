"""Across documents: the alias index of known entities (from the graph, or a user-supplied KB).

Lookup order: the normalised name or a recorded alias exactly (never missed, whatever the type), an
organisation's recorded acronym, then a rapidfuzz match of the same type, accepted only when the digits agree
(so "SR-2023-052" never becomes "SR-2023-053") and the contexts overlap or the names are nearly identical.

As of a chunk: every name, alias, acronym, surname and context word remembers when it was first seen (the
publication day and ingestion instant of the first chunk that showed it), and a lookup for a chunk consults only
what was published on or before the chunk's day and ingested strictly before it. So a chunk links the same way
whether a later-published article happened to be processed before it or not (KB entries and entities loaded
without a time are always visible). Nothing here depends on set iteration order (PYTHONHASHSEED): candidates
are visited in sorted order and trimming keeps the earliest-seen words.

In any order: extract replicas apply each other's linking journals as they arrive (extract/entities/link_log.py)
and a restart replays them from the graph in another order, so every operation is commutative: first-seen times
are minima, counts and votes sums, an entity's name and type those of its earliest-seen spelling (then the
smaller name and type), every spelling an add showed a key of its entity, and an alias edge the first seen one
(cycles broken at their latest edge). Applying the same journals in any order gives the same index."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypeVar

from rapidfuzz import fuzz, process

from newskg.extract.entities.names import CALENDAR_WORDS, digits_of, initials, name_key
from newskg.extract.entities.types import PERSON_CONFUSIONS

FUZZY_CUTOFF = 88.0
NEAR_IDENTICAL = 95.0
# The words two names do not share must be alike on their own: a shared designator ("… International Holdings")
# carries most of a whole-name similarity, so "Korvan International Holdings" is never "Varnaan International
# Holdings" (a new name is not a typo of a known one).
DISTINCT_WORDS_CUTOFF = 80.0
MIN_CONTEXT_OVERLAP = 0.05
CONTEXT_WORDS_KEPT = 300

Seen = tuple[int, int]  # (publication day yyyymmdd, ingestion epoch ms) of the first chunk that showed it
ALWAYS = (0, 0)  # KB entries, names given without a time: visible to every chunk

K = TypeVar("K")  # the undo log's tables: any key and value type
V = TypeVar("V")


def visible(seen: Seen, as_of: Seen | None) -> bool:
    """Published on or before the chunk's day and ingested strictly before it (None: everything)."""
    return as_of is None or (seen[0] <= as_of[0] and seen[1] < as_of[1]) or seen == ALWAYS


def _earlier(a: Seen, b: Seen) -> Seen:
    """First seen, axis by axis: the first publication and the first ingestion (commutative, so the index ends
    the same whatever order the chunks came in)."""
    return min(a[0], b[0]), min(a[1], b[1])


@dataclass
class KnownEntity:
    id: str
    name: str
    type: str
    seen: Seen = ALWAYS
    aliases: dict[str, Seen] = field(default_factory=dict[str, Seen])  # alias → first seen
    context: dict[str, Seen] = field(default_factory=dict[str, Seen])  # context word → first seen
    mentions: int = 0
    description: str | None = None
    # (type, first seen) → vote weight: the mentions' types, for the type vote (`type_as_of`).
    votes: dict[tuple[str, Seen], int] = field(default_factory=dict[tuple[str, Seen], int])
    # (name, type) → first seen: every spelling and type it was added under; the earliest names it (`_spelling`)
    spellings: dict[tuple[str, str], Seen] = field(default_factory=dict[tuple[str, str], Seen])
    from_kb: bool = False  # a knowledge-base entry: its id wins over content-hash ids of the same name

    def context_as_of(self, as_of: Seen | None) -> set[str]:
        return {w for w, seen in self.context.items() if visible(seen, as_of)}

    def type_as_of(self, as_of: Seen | None, more: dict[tuple[str, Seen], int] | None = None) -> str:
        """The weighted majority of the types its mentions had as of the chunk, plus `more`: the votes of the
        chunk's own article, which the index does not show it (the same chunk's votes are counted once). Ties go
        to the type it was created with, then alphabetically. No votes: the type it was created with."""
        counted = {key: weight for key, weight in self.votes.items() if visible(key[1], as_of)}
        counted.update(more or {})
        tally: dict[str, int] = {}
        for (kind, _), weight in counted.items():
            tally[kind] = tally.get(kind, 0) + weight
        if not any(tally.values()):
            return self.type
        return max(sorted(tally), key=lambda kind: (tally[kind], kind == self.type))


@dataclass(frozen=True)
class Recorded:
    """What a KB entry or the graph already records of an entity, beyond the spelling being added: its aliases,
    its mention count (1: the mention being linked; a KB entry has 0), its description."""

    aliases: Iterable[str] = ()
    mentions: int = 1
    description: str | None = None


@dataclass(frozen=True)
class LinkDecision:
    entity_id: str
    method: str  # exact | alias | acronym | fuzzy
    score: float
    explanation: str


_MISSING = object()  # an undo entry's "there was no value under this key"


class AliasIndex:
    """Every change goes through `_put`/`_set_attr`, which, while a transaction is open (`begin`), log the value
    they replace: `rollback(mark)` undoes everything after a mark, `commit` keeps it all (the extract stage
    applies a chunk's operations for good only once its write succeeded: extract/entities/linker.py)."""

    def __init__(self) -> None:
        self.entities: dict[str, KnownEntity] = {}
        # key → {entity id → when that key was first seen for it}
        self._by_key: dict[str, dict[str, Seen]] = defaultdict(dict)
        self._by_acronym: dict[str, dict[str, Seen]] = defaultdict(dict)
        # type → {key → {entity id → first seen}}: per entity, so a retyped entity's keys move with it
        self._keys_by_type: dict[str, dict[str, dict[str, Seen]]] = defaultdict(dict)
        self._person_parts: dict[str, dict[str, Seen]] = defaultdict(dict)  # surname of a full name → ids
        # alias edges: an entity first created from a short form alone ("Leto") → the full entity it was later
        # proven to abbreviate ("Jared Leto"), with when that was first seen: lookups as of then follow the edge
        self.merged: dict[str, tuple[str, Seen]] = {}
        # first word of a name or alias → {its key words → first seen}: the known-name matcher's table
        self._by_first_word: dict[str, dict[tuple[str, ...], Seen]] = defaultdict(dict)
        # (container, key or attribute, the value it replaced): what `rollback` undoes; None outside a transaction
        self._undo: list[tuple[object, object, object]] | None = None

    def begin(self) -> int:
        """Open a transaction (or continue the open one); returns a mark to roll back to."""
        if self._undo is None:
            self._undo = []
        return len(self._undo)

    def rollback(self, mark: int = 0) -> None:
        """Undo every change made since `mark`, newest first; the transaction stays open."""
        undo = self._undo or []
        while len(undo) > mark:
            container, key, old = undo.pop()
            if isinstance(container, dict):
                if old is _MISSING:
                    del container[key]
                else:
                    container[key] = old
            else:
                setattr(container, str(key), old)

    def commit(self) -> None:
        """Keep every change made in the transaction, and close it."""
        self._undo = None

    def _put(self, table: dict[K, V], key: K, value: V) -> None:
        if self._undo is not None:
            self._undo.append((table, key, table.get(key, _MISSING)))
        table[key] = value

    def _set_attr(self, target: object, name: str, value: object) -> None:
        if self._undo is not None:
            self._undo.append((target, name, getattr(target, name)))
        setattr(target, name, value)

    def _drop(self, table: dict[K, V], key: K) -> None:
        if key in table:
            if self._undo is not None:
                self._undo.append((table, key, table[key]))
            del table[key]

    def _table(self, tables: dict[str, dict[K, V]], key: str) -> dict[K, V]:
        """tables[key], made (and logged) if missing: a rollback leaves no empty table behind."""
        table = tables.get(key)
        if table is None:
            table = dict[K, V]()  # the table's own type, not dict[Unknown, Unknown]
            self._put(tables, key, table)
        return table

    def _note(self, tables: dict[str, dict[str, Seen]], key: str, entity_id: str, seen: Seen) -> None:
        table = self._table(tables, key)
        known = table.get(entity_id)
        self._put(table, entity_id, seen if known is None else _earlier(known, seen))

    def _unnote(self, tables: dict[str, dict[str, Seen]], key: str, entity_id: str) -> None:
        """The entity no longer under `key` (and the key gone once no entity is: the same tables in any order)."""
        table = tables.get(key)
        if table is not None:
            self._drop(table, entity_id)
            if not table:
                self._drop(tables, key)

    def __len__(self) -> int:
        return len(self.entities)

    def add(
        self,
        entity_id: str,
        name: str,
        kind: str,
        context: set[str] | None = None,
        seen: Seen = ALWAYS,
        recorded: Recorded = Recorded(),
    ) -> KnownEntity:
        """The entity `entity_id` with the spelling (`name`, `kind`) and the `context` words, seen at `seen`, and
        what a KB entry or the graph `recorded` of it (by default: nothing but the mention being linked)."""
        aliases, mentions, description = recorded.aliases, recorded.mentions, recorded.description
        entity = self.entities.get(entity_id)
        if entity is None:
            entity = KnownEntity(entity_id, name, kind, seen, description=description)
            self._put(self.entities, entity_id, entity)
        else:
            self._set_attr(entity, "seen", _earlier(entity.seen, seen))
        known = entity.spellings.get((name, kind))
        self._put(entity.spellings, (name, kind), seen if known is None else _earlier(known, seen))
        self._spelling(entity)
        self._index_key(entity, name, entity.spellings[(name, kind)])
        self._index_name(entity, entity.seen)  # again when an earlier chunk lowered the first-seen time
        self._set_attr(entity, "mentions", entity.mentions + mentions)
        for alias in aliases:
            self.add_alias(entity_id, alias, seen)
        if context:
            for word in context:
                known = entity.context.get(word)
                self._put(entity.context, word, seen if known is None else _earlier(known, seen))
            if len(entity.context) > CONTEXT_WORDS_KEPT:
                # The earliest-seen words stay (then by the word itself): the same words whatever the order.
                kept = sorted(entity.context.items(), key=lambda kv: (kv[1], kv[0]))[:CONTEXT_WORDS_KEPT]
                self._set_attr(entity, "context", dict(kept))
        return entity

    def _spelling(self, entity: KnownEntity) -> None:
        """Name and type from the earliest-seen spelling (then the smaller name and type), whatever order the adds
        came in; a KB entry keeps the KB's. What hangs on the name and type moves with them."""
        (name, kind), _ = min(entity.spellings.items(), key=lambda item: (item[1], item[0]))
        if entity.from_kb or (name, kind) == (entity.name, entity.type):
            return
        self._unindex_name(entity)
        if kind != entity.type:
            self._retype_keys(entity, kind)
        self._set_attr(entity, "name", name)
        self._set_attr(entity, "type", kind)

    def _retype_keys(self, entity: KnownEntity, kind: str) -> None:
        """The entity's keys from its type's fuzzy table to `kind`'s (a table left empty goes)."""
        keys = self._keys_of(entity)
        old = self._keys_by_type.get(entity.type, {})
        for key in keys:
            self._unnote(old, key, entity.id)
        if not old:
            self._drop(self._keys_by_type, entity.type)
        for key, seen in keys.items():
            self._note(self._table(self._keys_by_type, kind), key, entity.id, seen)

    @staticmethod
    def _keys_of(entity: KnownEntity) -> dict[str, Seen]:
        """The entity's name keys (of every spelling and alias), each first seen when its earliest one was."""
        keys: dict[str, Seen] = {}
        for name, seen in [*((n, s) for (n, _), s in entity.spellings.items()), *entity.aliases.items()]:
            key = name_key(name)
            if key:
                keys[key] = _earlier(keys[key], seen) if key in keys else seen
        return keys

    def _name_parts(self, entity: KnownEntity) -> tuple[str | None, str | None]:
        """(acronym, surname) the entity's name gives under its type: an organisation's initials, a person's last
        word."""
        words = name_key(entity.name).split()
        acronym = initials(entity.name) if entity.type == "ORG" and len(words) > 1 else None
        # Surnames only: across documents a lone first name ("Karl") is too common to trust.
        person = entity.type == "PERSON" and len(words) > 1 and words[-1] not in CALENDAR_WORDS
        return acronym, words[-1] if person else None

    def _index_name(self, entity: KnownEntity, seen: Seen) -> None:
        acronym, surname = self._name_parts(entity)
        if acronym:
            self._note(self._by_acronym, acronym, entity.id, seen)
        if surname:
            self._note(self._person_parts, surname, entity.id, seen)

    def _unindex_name(self, entity: KnownEntity) -> None:
        acronym, surname = self._name_parts(entity)
        if acronym:
            self._unnote(self._by_acronym, acronym, entity.id)
        if surname:
            self._unnote(self._person_parts, surname, entity.id)

    def add_alias(self, entity_id: str, alias: str, seen: Seen = ALWAYS) -> None:
        entity = self.entities[entity_id]
        if not name_key(alias):
            return
        known = entity.aliases.get(alias)
        self._put(entity.aliases, alias, seen if known is None else _earlier(known, seen))
        self._index_key(entity, alias, entity.aliases[alias])

    def _index_key(self, entity: KnownEntity, name: str, seen: Seen) -> None:
        key = name_key(name)
        if key:
            self._note(self._by_key, key, entity.id, seen)
            words = tuple(key.split())
            by_word = self._table(self._by_first_word, words[0])
            known = by_word.get(words)
            self._put(by_word, words, seen if known is None else _earlier(known, seen))
            self._note(self._table(self._keys_by_type, entity.type), key, entity.id, seen)

    def _visible_ids(self, table: dict[str, dict[str, Seen]], key: str, as_of: Seen | None) -> list[str]:
        """The ids visible as of the chunk under `key`, each as the entity it stands for then (alias edges)."""
        return sorted({self.canonical(i, as_of) for i, seen in table.get(key, {}).items() if visible(seen, as_of)})

    def lookup(
        self, name: str, kind: str, context: set[str] | None = None, as_of: Seen | None = None
    ) -> LinkDecision | None:
        """`as_of`: the (day, ingestion ms) of the chunk being linked; None consults everything."""
        key = name_key(name)
        if not key:
            return None
        exact = self._visible_ids(self._by_key, key, as_of)
        if exact:
            return self._best(exact, kind, "exact", 100.0, f"{name!r} is a recorded name or alias", as_of)
        compact = key.replace(" ", "")
        acronym = self._visible_ids(self._by_acronym, compact, as_of) if name.strip().isupper() else []
        if acronym:
            return self._best(acronym, kind, "acronym", 100.0, f"{name!r} is the acronym", as_of)
        people = self._visible_ids(self._person_parts, key, as_of)
        if " " not in key and kind in PERSON_CONFUSIONS and len(people) == 1:
            why = f"{name!r} is the surname of the one known person"
            return self._best(people, "PERSON", "surname", 90.0, why, as_of)
        return self._fuzzy(name, key, kind, context or set(), as_of)

    def lookup_ids(self, key: str, as_of: Seen | None = None) -> list[str]:
        """The entities a name key exactly names as of the chunk (alias edges followed)."""
        return self._visible_ids(self._by_key, key, as_of)

    def canonical(self, entity_id: str, as_of: Seen | None = None) -> str:
        """The entity an id stands for as of the chunk: alias edges visible then are followed. Edges learnt in
        different orders can close a cycle; its latest edge (by first seen, then source id) is not followed, so
        every id of the cycle stands for that edge's source, whichever order the edges came in."""
        path = [entity_id]
        while (edge := self.merged.get(path[-1])) and visible(edge[1], as_of):
            if edge[0] in path:
                cycle = path[path.index(edge[0]) :]
                return max(cycle, key=lambda i: (self.merged[i][1], i))
            path.append(edge[0])
        return path[-1]

    def merge(self, source: str, target: str, seen: Seen = ALWAYS) -> bool:
        """An alias edge source → target, first seen `seen`; True when source now stands for what target does.
        Replay-deterministic: a source keeps the edge first seen (then the smaller target id), whatever order the
        chunks came in (a cycle is broken where `canonical` reads it, not refused here: refusing depends on which
        edge came first)."""
        if source == target:
            return False
        known = self.merged.get(source)
        if known is None or (seen, target) < (known[1], known[0]):
            self._put(self.merged, source, (target, seen))
        return self.merged[source][0] == target and self.canonical(source) == self.canonical(target)

    def vote(self, entity_id: str, kind: str, weight: int, seen: Seen = ALWAYS) -> None:
        """One mention's type, for the entity's type vote, remembered as first seen `seen`."""
        if weight:
            votes = self.entities[entity_id].votes
            self._put(votes, (kind, seen), votes.get((kind, seen), 0) + weight)

    def type_as_of(self, entity_id: str, as_of: Seen | None) -> str:
        return self.entities[entity_id].type_as_of(as_of)

    def names_starting(self, first_word: str, as_of: Seen | None = None) -> list[tuple[tuple[str, ...], str]]:
        """The names and aliases visible as of the chunk whose first key word is `first_word`, each with the type
        of the entity it names (the most mentioned when several share it)."""
        found: list[tuple[tuple[str, ...], str]] = []
        for words, seen in self._by_first_word.get(first_word, {}).items():
            if not visible(seen, as_of):
                continue
            ids = self._visible_ids(self._by_key, " ".join(words), as_of)
            if ids:
                chosen = max(ids, key=lambda i: (self.entities[i].mentions, i))
                found.append((words, self.entities[chosen].type_as_of(as_of)))
        return found

    def person_name_parts(self, as_of: Seen | None = None) -> set[str]:
        """Surnames of exactly one known person: a lone proper noun equal to one is worth a mention."""
        return {
            part
            for part, ids in self._person_parts.items()
            if sum(1 for seen in ids.values() if visible(seen, as_of)) == 1
        }

    def _best(
        self, ids: list[str], kind: str, method: str, score: float, why: str, as_of: Seen | None = None
    ) -> LinkDecision:
        same_type = [i for i in ids if self.entities[i].type_as_of(as_of) == kind]
        pool = same_type or ids
        chosen = max(pool, key=lambda i: (self.entities[i].from_kb, self.entities[i].mentions, i))
        entity = self.entities[chosen]
        note = "" if len(pool) == 1 else f"; most mentioned of {len(pool)} candidates"
        return LinkDecision(chosen, method, score, f"{why} of {entity.name!r} ({entity.type_as_of(as_of)}){note}")

    def _fuzzy(self, name: str, key: str, kind: str, context: set[str], as_of: Seen | None) -> LinkDecision | None:
        keys = self._keys_by_type.get(kind, {})
        choices = sorted(k for k, ids in keys.items() if any(visible(seen, as_of) for seen in ids.values()))
        if not choices:
            return None
        for candidate, score, _ in process.extract(
            key, choices, scorer=fuzz.token_sort_ratio, score_cutoff=FUZZY_CUTOFF, limit=5
        ):
            if digits_of(candidate) != digits_of(key):
                continue  # names that differ in digits or codes are different things
            if not _distinct_words_alike(key, candidate):
                continue
            for entity_id in self._visible_ids(self._by_key, candidate, as_of):
                entity = self.entities[entity_id]
                if entity.type != kind:
                    continue
                overlap = _jaccard(context, entity.context_as_of(as_of))
                if score >= NEAR_IDENTICAL or overlap >= MIN_CONTEXT_OVERLAP:
                    return LinkDecision(
                        entity_id,
                        "fuzzy",
                        score,
                        f"{name!r} ~ {entity.name!r} (similarity {score:.0f}, context overlap "
                        f"{overlap:.2f}, same type {kind})",
                    )
        return None


def _distinct_words_alike(a: str, b: str) -> bool:
    """The words of each name that the other lacks, compared alone (nothing differs: alike)."""
    a_words, b_words = a.split(), b.split()
    a_rest = " ".join(w for w in a_words if w not in b_words)
    b_rest = " ".join(w for w in b_words if w not in a_words)
    return not a_rest or not b_rest or fuzz.ratio(a_rest, b_rest) >= DISTINCT_WORDS_CUTOFF


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0
