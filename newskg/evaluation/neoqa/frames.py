"""Typed fact frames: each makes one outline item (a single sentence with entity markup) and keeps the facts it
states, so questions can be built from exactly the items that hold their answer. Frames that would make a
question ambiguous (a second proposal by the same person, two people in one role) are refused, not emitted."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, TypedDict

from newskg.evaluation.neoqa import vocab
from newskg.evaluation.neoqa.kb import EntityBook, Entry


def words(day: dt.date) -> str:
    return f"{day:%B} {day.day}, {day.year}"


Slots = dict[str, str | list[str]]
"""What a fact states, by role: entity ids ("person", "org", "event" …), its "answer" and "topic"; a meeting's
"people" is the one list."""


class Taken(TypedDict):
    """Timeline-wide uniqueness while frames write: who holds which role, who proposed, what was proposed, who
    spoke on which topic."""

    roles: dict[tuple[str, str], str]  # (organisation id, role) → person id
    proposers: set[str]
    proposals: set[str]
    quotes: set[tuple[str, str]]  # (person id, topic)


def no_taken() -> Taken:
    return {"roles": {}, "proposers": set(), "proposals": set(), "quotes": set()}


@dataclass
class Fact:
    kind: str
    sentence: str
    slots: Slots = field(default_factory=Slots)
    day: dt.date | None = None  # the date the sentence states, for time-span questions
    clause: str | None = None  # that date's moment as a noun phrase: "the opening of …"
    id: str = ""  # the outline item id, set when the item takes its place in the outline

    def slot(self, key: str) -> str:
        """A single-valued slot (every slot but a meeting's "people")."""
        value = self.slots[key]
        if not isinstance(value, str):
            raise TypeError(f"the {self.kind} fact's {key!r} slot is a list")
        return value


@dataclass
class Scene:
    """What frames draw on while one event is written."""

    rng: random.Random
    book: EntityBook
    genre: vocab.GenreSpec
    created_at: int
    day: dt.date
    place: Entry
    taken: Taken = field(default_factory=no_taken)  # timeline-wide uniqueness: proposals, quotes, roles

    def pick(self, entity_class: str, make: Callable[[], Entry], reuse: float = 0.6) -> Entry:
        known = self.book.of_class(entity_class)
        if known and self.rng.random() < reuse:
            return self.rng.choice(known)
        return make()

    def person(self) -> Entry:
        return self.pick("person", lambda: self.book.person(self.created_at, self.day, self.place))

    def org(self) -> Entry:
        return self.pick("organization", lambda: self.book.organization(self.created_at, self.day, self.place))

    def building(self) -> Entry:
        return self.pick("building", lambda: self.book.building(self.created_at, self.day, self.place))

    def later(self, low: int, high: int) -> dt.date:
        return self.day + dt.timedelta(days=self.rng.randint(low, high))

    def fresh(self, key: Literal["proposers", "proposals"], options: list[str]) -> str | None:
        used = self.taken.setdefault(key, set())
        free = [o for o in options if o not in used]
        if not free:
            return None
        choice = self.rng.choice(free)
        used.add(choice)
        return choice


def role(s: Scene) -> Fact | None:
    org = s.org()
    free = [r for r in vocab.ROLES if (org.id, r) not in s.taken.setdefault("roles", {})]
    if not free:
        return None
    person, title = s.book.person(s.created_at, s.day, s.place), s.rng.choice(free)
    s.taken["roles"][(org.id, title)] = person.id
    person.facts.update(role=title, org=org.id)
    return Fact(
        "role",
        f"{person.mark()} serves as the {title} of {org.mark()}.",
        {"person": person.id, "role": title, "org": org.id},
    )


def _officials(s: Scene) -> list[Entry]:
    return [e for e in s.book.of_class("person") if "role" in e.facts]


def proposal(s: Scene) -> Fact | None:
    free = [p for p in _officials(s) if p.id not in s.taken.setdefault("proposers", set())]
    thing = s.fresh("proposals", s.genre["initiatives"])
    if not free or thing is None:
        return None
    person = s.rng.choice(free)
    s.taken["proposers"].add(person.id)
    return Fact("proposal", f"{person.mark()} proposed {thing}.", {"person": person.id, "answer": thing})


def quote(s: Scene) -> Fact | None:
    officials = _officials(s)
    if not officials:
        return None
    person = s.rng.choice(officials)
    topic = s.rng.choice(s.genre["topics"])
    if (person.id, topic) in s.taken.setdefault("quotes", set()):
        return None
    s.taken["quotes"].add((person.id, topic))
    outcome = s.rng.choice(vocab.OUTCOMES)
    return Fact(
        "quote",
        f"{person.mark()} said the {topic} would {outcome}.",
        {"person": person.id, "topic": topic, "answer": outcome},
    )


def opening(s: Scene) -> Fact:
    org, thing = s.org(), s.rng.choice(s.genre["initiatives"])
    return Fact(
        "opening",
        f"On {words(s.day)}, {org.mark()} announced {thing}.",
        {"org": org.id},
        s.day,
        f"the day {org.mark()} announced {thing}",
    )


def schedule(s: Scene) -> Fact:
    org = s.org()
    event = s.book.event(s.created_at, s.day, s.place)
    when = s.later(5, 90)
    return Fact(
        "schedule",
        f"{org.mark()} scheduled the {event.mark()} for {words(when)}.",
        {"org": org.id, "event": event.id},
        when,
        f"the date set for the {event.mark()}",
    )


def deadline(s: Scene) -> Fact | None:
    officials = _officials(s)
    if not officials:
        return None
    person, topic = s.rng.choice(officials), s.rng.choice(s.genre["topics"])
    when = s.later(20, 200)
    return Fact(
        "deadline",
        f"{person.mark()} said the {topic} must be completed by {words(when)}.",
        {"person": person.id},
        when,
        f"the completion deadline {person.mark()} gave for the {topic}",
    )


def meeting(s: Scene) -> Fact | None:
    people = s.book.of_class("person")
    if len(people) < 2:
        return None
    a, b = s.rng.sample(people, 2)
    where, when = s.building(), s.day - dt.timedelta(days=s.rng.randint(0, 6))
    return Fact(
        "meeting",
        f"On {words(when)}, {a.mark()} met {b.mark()} at {where.mark()}.",
        {"people": [a.id, b.id]},
        when,
        f"the meeting of {a.mark()} and {b.mark()} at {where.mark()}",
    )


def venue(s: Scene) -> Fact | None:
    events = s.book.of_class("event")
    if not events:
        return None
    event, where = s.rng.choice(events), s.building()
    return Fact(
        "venue",
        f"The {event.mark()} will be held at {where.mark()} in {s.place.mark()}.",
        {"event": event.id, "building": where.id},
    )


def turnout(s: Scene) -> Fact:
    org = s.org()
    n, group, action = s.rng.randrange(12, 2400), s.rng.choice(vocab.GROUPS), s.rng.choice(vocab.GROUP_ACTIONS)
    return Fact("turnout", f"{org.mark()} reported that {n:,} {group} {action}.", {"org": org.id})


def budget(s: Scene) -> Fact:
    org, thing = s.org(), s.rng.choice(s.genre["initiatives"])
    amount = s.rng.randrange(20, 950) * 1000
    return Fact("budget", f"{org.mark()} set aside {amount:,} crowns for {thing}.", {"org": org.id})


def product(s: Scene) -> Fact:
    org = s.org()
    item = s.book.product(s.created_at, s.day, org)
    price = s.rng.randrange(19, 899)
    return Fact(
        "product",
        f"{org.mark()} unveiled the {item.mark()}, a {item.facts['kind']} priced at {price} crowns.",
        {"org": org.id, "product": item.id},
    )


def artwork(s: Scene) -> Fact:
    creator = s.person()
    work, where = s.book.art(s.created_at, s.day, creator), s.building()
    return Fact(
        "art",
        f"{creator.mark()} created {work.mark()}, a {work.facts['kind']} now shown at {where.mark()}.",
        {"person": creator.id, "art": work.id},
    )


def petition(s: Scene) -> Fact:
    org = s.org()
    n, demand = s.rng.randrange(150, 6000), s.rng.choice(vocab.DEMANDS)
    return Fact(
        "petition",
        f"A petition signed by {n:,} residents of {s.place.mark()} asked {org.mark()} to {demand}.",
        {"org": org.id},
    )


def criticism(s: Scene) -> Fact:
    person = s.person()
    thing, verdict = s.rng.choice(s.genre["initiatives"]), s.rng.choice(vocab.CRITICISMS)
    return Fact(
        "criticism",
        f"{person.mark()}, a {person.facts['profession']}, called {thing} {verdict}.",
        {"person": person.id},
    )


def pledge(s: Scene) -> Fact:
    misc = s.pick("miscellaneous", lambda: s.book.miscellaneous(s.created_at, s.day))
    n = s.rng.randrange(40, 3000)
    return Fact("pledge", f"More than {n:,} people have signed the {misc.mark()} so far.", {"misc": misc.id})


OPENING_FRAMES = [opening, role, role, schedule]
BODY_FRAMES = [
    role,
    proposal,
    proposal,
    quote,
    quote,
    quote,
    schedule,
    deadline,
    meeting,
    venue,
    turnout,
    budget,
    product,
    artwork,
    petition,
    criticism,
    pledge,
]
