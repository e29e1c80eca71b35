"""Offline, seeded timelines (NeoQA §4.1, C.1): a genre and an entity-free seed summary, then 10 dated events,
each an outline of 20-30 single-sentence items from typed fact frames, the KB updated after every event, and the
next event seeded by one of several mutually exclusive continuations chosen at random."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field

from newskg.evaluation.neoqa import frames, vocab
from newskg.evaluation.neoqa.kb import EntityBook
from newskg.evaluation.neoqa.names import NameMaker
from newskg.evaluation.neoqa.records import MARKUP, Event, EventType, Genre, OutlineItem, Timeline, UsedEntity


@dataclass
class World:
    """A timeline and what the generator knows about it beyond the release format: the facts of every item."""

    timeline: Timeline
    facts: dict[str, frames.Fact] = field(default_factory=dict[str, frames.Fact])  # outline item id → its fact
    book: EntityBook | None = None
    # (organisation id, role) → person id
    roles: dict[tuple[str, str], str] = field(default_factory=dict[tuple[str, str], str])

    def holder(self, org_id: str, role: str) -> str | None:
        return self.roles.get((org_id, role))


def start_timeline(rng: random.Random, suffix: str) -> tuple[Timeline, vocab.GenreSpec, EntityBook, dt.date]:
    """What both generators begin with: a genre, an event type and its seed summary (C.1.1), an empty
    knowledge base, and the first event's day."""
    genre_id = rng.choice(sorted(vocab.GENRES))
    genre = vocab.GENRES[genre_id]
    type_index = rng.randrange(len(genre["event_types"]))
    seed = rng.choice(genre["summaries"])
    timeline = Timeline(
        timeline_id=f"{genre_id}:{type_index}:{suffix}",
        genre=Genre(category=genre["category"], genre_id=genre_id),
        event_type=EventType(category=genre["event_types"][type_index], event_type_id=f"{genre_id}:{type_index}"),
        initial_summary=seed,
        events=[],
    )
    book = EntityBook(rng, NameMaker(rng, genre_id))
    return timeline, genre, book, dt.date(rng.randint(2031, 2034), rng.randint(1, 12), rng.randint(1, 28))


def build_timeline(rng: random.Random, index: int, events: int = 10, items: tuple[int, int] = (20, 30)) -> World:
    timeline, genre, book, day = start_timeline(rng, str(index))
    world = World(timeline, book=book)
    place = book.location(0, day)
    taken: frames.Taken = {"roles": world.roles, "proposers": set(), "proposals": set(), "quotes": set()}
    summary = timeline.initial_summary
    for n in range(events):
        scene = frames.Scene(rng, book, genre, n, day, place, taken)
        event = _write_event(world, scene, f"{timeline.timeline_id}:E{n}", summary, rng.randint(*items))
        world.timeline.events.append(event)
        world.timeline.named_entity_snapshots.append(book.snapshot(n, event.event_id, day))
        book.new_in_event = set()
        summary = _next_summary(rng, genre)
        day = day + dt.timedelta(days=rng.randint(4, 45))
        if rng.random() < 0.3:  # the story sometimes moves to a neighbouring town
            place = book.location(n + 1, day)
    return world


def _write_event(world: World, scene: frames.Scene, event_id: str, summary: str, size: int) -> Event:
    facts: list[frames.Fact] = []
    plan = list(frames.OPENING_FRAMES)
    while len(facts) < size:
        frame = plan.pop(0) if plan else scene.rng.choice(frames.BODY_FRAMES)
        fact = frame(scene)
        if fact is not None and all(fact.sentence != f.sentence for f in facts):
            facts.append(fact)
    outline: list[OutlineItem] = []
    for pos, fact in enumerate(facts):
        fact.id = f"N{scene.created_at}-S{pos}"
        world.facts[fact.id] = fact
        outline.append(OutlineItem(sentence=fact.sentence, id=fact.id, pos=pos))
    scene.book.record_event(scene.created_at, scene.day, [f.sentence for f in facts])
    used = sorted({eid for f in facts for eid in _ids(f.sentence)}, key=_id_order)
    return Event(
        event_id=event_id,
        created_at=scene.created_at,
        initial_summary=summary,
        date=scene.day.isoformat(),
        used_named_entities=[UsedEntity(id=eid, new=eid in scene.book.new_in_event) for eid in used],
        outline=outline,
    )


def _ids(sentence: str) -> list[str]:
    return [m.group(2) for m in MARKUP.finditer(sentence)]


def _id_order(entity_id: str) -> tuple[str, int]:
    kind, _, number = entity_id.rpartition("-")
    return kind, int(number)


def _next_summary(rng: random.Random, genre: vocab.GenreSpec) -> str:
    """Steps 11-12: several diverging continuations, one picked at random, so the story cannot simply follow
    the most familiar real-world path."""
    thing = rng.choice(genre["initiatives"])
    candidates = rng.sample(vocab.DIRECTIONS, 3)
    return rng.choice(candidates).format(thing=thing)
