"""The timeline's knowledge base of fictional named entities (NeoQA steps 4-10): entries with type-specific
properties, a history line per event an entity takes part in, and a snapshot after every event."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from newskg.evaluation.neoqa import vocab
from newskg.evaluation.neoqa.names import NameMaker
from newskg.evaluation.neoqa.records import EntitySnapshot, HistoryEntry, NamedEntity, plain

PREFIX = {
    "person": "PERSON",
    "organization": "ORGANIZATION",
    "location": "LOCATION",
    "product": "PRODUCT",
    "art": "ART",
    "event": "EVENT",
    "building": "BUILDING",
    "miscellaneous": "MISC",
}


@dataclass
class Entry:
    entity: NamedEntity
    # what the generator knows beyond the KB text (role, org …)
    facts: dict[str, str] = field(default_factory=dict[str, str])

    @property
    def id(self) -> str:
        return self.entity.id

    @property
    def name(self) -> str:
        return self.entity.name

    def mark(self) -> str:
        return f"{{{self.entity.name}|{self.entity.id}}}"


class EntityBook:
    def __init__(self, rng: random.Random, names: NameMaker):
        self.rng = rng
        self.names = names
        self.entries: dict[str, Entry] = {}
        self._counts: dict[str, int] = {}
        self.new_in_event: set[str] = set()

    def of_class(self, entity_class: str) -> list[Entry]:
        return [e for e in self.entries.values() if e.entity.entity_class == entity_class]

    def add(
        self,
        entity_class: str,
        name: str,
        created_at: int,
        day: dt.date,
        description: str,
        properties: dict[str, str | int | float],
        **facts: str,
    ) -> Entry:
        self._counts[entity_class] = self._counts.get(entity_class, 0) + 1
        entity_id = f"{PREFIX[entity_class]}-{self._counts[entity_class]}"
        entity = NamedEntity(
            id=entity_id,
            name=name,
            entity_class=entity_class,
            description=description,
            created_at=created_at,
            last_updated=day.isoformat(),
            # The class's properties are extra fields (extra="allow"); the synthesized __init__ knows only the
            # declared ones, so it matches them against `type` and `history`.
            **properties,  # pyright: ignore[reportArgumentType]
        )
        entry = Entry(entity, facts)
        self.entries[entity_id] = entry
        self.new_in_event.add(entity_id)
        return entry

    def record_event(self, created_at: int, day: dt.date, sentences: list[str]) -> None:
        """Step 10: one history line per entity involved, its first sentence in this event's outline."""
        for entry in self.entries.values():
            marker = f"|{entry.id}}}"
            mentioned = next((s for s in sentences if marker in s), None)
            if mentioned:
                entry.entity.history.append(
                    HistoryEntry(created_at=created_at, event_update=plain(mentioned), date=day.isoformat())
                )
                entry.entity.last_updated = day.isoformat()

    def snapshot(self, created_at: int, event_id: str, day: dt.date) -> EntitySnapshot:
        grouped: dict[str, list[NamedEntity]] = {}
        for entry in self.entries.values():
            grouped.setdefault(entry.entity.entity_class, []).append(entry.entity.model_copy(deep=True))
        return EntitySnapshot(created_at=created_at, for_event=event_id, date=day.isoformat(), named_entities=grouped)

    # --- typed constructors: the properties each class carries (NeoQA Table 5 shows a person's)

    def person(self, created_at: int, day: dt.date, place: Entry) -> Entry:
        rng = self.rng
        profession = rng.choice(vocab.PROFESSIONS)
        born = dt.date(rng.randint(1950, 2000), rng.randint(1, 12), rng.randint(1, 28))
        return self.add(
            "person",
            self.names.person(),
            created_at,
            day,
            f"A {profession} from {place.name} who follows local affairs closely.",
            {
                "date_of_birth": born.isoformat(),
                "gender": rng.choice(["Female", "Male", "Non-binary"]),
                "profession": profession,
                "nationality": self.names.demonym,
                "education": rng.choice(vocab.EDUCATION),
            },
            profession=profession,
            home=place.id,
        )

    def location(self, created_at: int, day: dt.date) -> Entry:
        return self.add(
            "location",
            self.names.location(),
            created_at,
            day,
            f"A town in {self.names.country}.",
            {"population": self.rng.randrange(8_000, 400_000, 500), "country": self.names.country},
        )

    def organization(self, created_at: int, day: dt.date, place: Entry) -> Entry:
        return self.add(
            "organization",
            self.names.organization(place.name),
            created_at,
            day,
            f"An organisation based in {place.name}.",
            {
                "founded": self.rng.randint(1890, 2020),
                "headquarters": place.name,
                "employees": self.rng.randrange(5, 900),
            },
            home=place.id,
        )

    def building(self, created_at: int, day: dt.date, place: Entry) -> Entry:
        return self.add(
            "building",
            self.names.building(place.name),
            created_at,
            day,
            f"A public building in {place.name}.",
            {"floors": self.rng.randint(1, 9), "opened": self.rng.randint(1850, 2015), "location": place.name},
            home=place.id,
        )

    def event(self, created_at: int, day: dt.date, place: Entry) -> Entry:
        return self.add(
            "event",
            self.names.event(place.name),
            created_at,
            day,
            f"A public gathering held in {place.name}.",
            {"budget": f"{self.rng.randrange(2, 90)},000 crowns", "location": place.name},
        )

    def product(self, created_at: int, day: dt.date, maker: Entry) -> Entry:
        kind = self.rng.choice(vocab.PRODUCT_KINDS)
        return self.add(
            "product",
            self.names.product(),
            created_at,
            day,
            f"A {kind} made by {maker.name}.",
            {"manufacturer": maker.name, "category": kind},
            kind=kind,
        )

    def art(self, created_at: int, day: dt.date, creator: Entry) -> Entry:
        kind = self.rng.choice(vocab.ART_KINDS)
        return self.add(
            "art",
            self.names.art(),
            created_at,
            day,
            f"A {kind} by {creator.name}.",
            {"creator": creator.name, "medium": kind},
            kind=kind,
        )

    def miscellaneous(self, created_at: int, day: dt.date) -> Entry:
        return self.add(
            "miscellaneous",
            self.names.miscellaneous(),
            created_at,
            day,
            "A public pledge that supporters sign to show their backing.",
            {"category": "pledge"},
        )
