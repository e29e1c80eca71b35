"""LLM mode, timelines (NeoQA C.1.2, steps 1-12): outline → refine → consistency → entities (real names replaced)
→ KB entries → history → diverse next summaries → mutually exclusive versions, one picked at random.

Entity markup ({name|ID}) is applied by exact string match against the KB rather than by a further prompt: the
paper verifies its LLM markup with the same heuristic, and the match is exact by construction."""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from newskg.core.llm.client import LLMClient
from newskg.evaluation.neoqa.kb import EntityBook, Entry
from newskg.evaluation.neoqa.llm_steps import ask, count_between
from newskg.evaluation.neoqa.names import is_real
from newskg.evaluation.neoqa.prompts import (
    consistency,
    entities,
    exclusive_summaries,
    history,
    kb_entry,
    next_summaries,
    outline,
    refine,
    rename,
)
from newskg.evaluation.neoqa.records import (
    MARKUP,
    Event,
    NamedEntity,
    OutlineItem,
    Timeline,
    UsedEntity,
    mark_names,
    plain,
)
from newskg.evaluation.neoqa.timeline import start_timeline


@dataclass(frozen=True)
class LLMTimelineConfig:
    events: int = 10
    items: tuple[int, int] = (20, 30)
    context_chars: int = 1500  # earlier events shown to the model (small local models have a 2k window)


def build_llm_timeline(client: LLMClient, rng: random.Random, index: int, config: LLMTimelineConfig) -> Timeline:
    timeline, _, book, day = start_timeline(rng, f"llm{index}")
    summary = timeline.initial_summary
    for n in range(config.events):
        event = _event(client, book, timeline, n, day, summary, config)
        timeline.events.append(event)
        timeline.named_entity_snapshots.append(book.snapshot(n, event.event_id, day))
        book.new_in_event = set()
        summary = _next_summary(client, rng, _story(timeline, config.context_chars))
        day += dt.timedelta(days=rng.randint(4, 45))
    return timeline


def _event(
    client: LLMClient,
    book: EntityBook,
    timeline: Timeline,
    n: int,
    day: dt.date,
    summary: str,
    config: LLMTimelineConfig,
) -> Event:
    story, known = _story(timeline, config.context_chars), _known(book)
    low, high = config.items
    draft = ask(
        client,
        outline.build(summary, story, known, day.isoformat(), max(2, low // 2)),
        count_between(max(2, low // 2), max(2, high // 2)),
    ).items
    detailed = ask(client, refine.build(draft, story), count_between(low, high)).items
    checked = ask(client, consistency.build(detailed, story, known), count_between(len(detailed), len(detailed)))
    sentences = _register_entities(client, book, checked.items, n, day)
    _record_history(client, book, sentences, n, day)
    used = sorted({m.group(2) for s in sentences for m in MARKUP.finditer(s)})
    return Event(
        event_id=f"{timeline.timeline_id}:E{n}",
        created_at=n,
        initial_summary=summary,
        date=day.isoformat(),
        used_named_entities=[UsedEntity(id=i, new=i in book.new_in_event) for i in used],
        outline=[OutlineItem(sentence=s, id=f"N{n}-S{p}", pos=p) for p, s in enumerate(sentences)],
    )


def _register_entities(client: LLMClient, book: EntityBook, sentences: list[str], n: int, day: dt.date) -> list[str]:
    """Steps 4-9: find the entities, give real-sounding ones a new name, add KB entries, mark them up."""
    found = ask(client, entities.build(sentences)).entities
    text = " ".join(sentences)
    known = {e.name: e for e in book.entries.values()}
    for item in found:
        name = item.name.strip()
        if name not in text or len(name.split()) > 5 or name in known:
            continue
        if is_real(name):
            fresh = _fictional_name(client, name, item.type, text)
            sentences = [s.replace(name, fresh) for s in sentences]
            text, name = " ".join(sentences), fresh
        entry = _kb_entry(client, book, name, item.type, text, n, day)
        known[name] = entry
    return [mark_names(s, {name: entry.mark() for name, entry in known.items()}) for s in sentences]


def _fictional_name(client: LLMClient, name: str, kind: str, text: str) -> str:
    """Step 5-6: a new name for one that is real; the outline is then rewritten with it (by exact replacement)."""

    def check(reply: rename.NewName) -> str | None:
        return "that name is real too, or already used" if is_real(reply.name) or reply.name in text else None

    return ask(client, rename.build(name, kind, text[:800]), check).name


def _kb_entry(client: LLMClient, book: EntityBook, name: str, kind: str, text: str, n: int, day: dt.date) -> Entry:
    def no_real_values(reply: kb_entry.KBEntry) -> str | None:
        real = [v for v in reply.properties.values() if isinstance(v, str) and is_real(v)]
        return f"these values name real things: {', '.join(real)}" if real else None

    made = ask(client, kb_entry.build(name, kind, text[:1200]), no_real_values)
    return book.add(kind, name, n, day, made.description, own_properties(made.properties))


def own_properties(properties: dict[str, str | int | float]) -> dict[str, str | int | float]:
    """The model's properties the entity record does not set itself (its id, name, class, times, history): one
    named `created_at` or `entity_class` collided with the record's own argument and stopped the whole run. `type`
    is a declared field a property may fill, when it is text."""
    declared = set(NamedEntity.model_fields) - {"type"}
    return {k: v for k, v in properties.items() if k not in declared and (k != "type" or isinstance(v, str))}


def _record_history(client: LLMClient, book: EntityBook, sentences: list[str], n: int, day: dt.date) -> None:
    """Step 10: the model's one-line account per entity; an entity it skips gets its first outline sentence."""
    ids = {m.group(2) for s in sentences for m in MARKUP.finditer(s)}
    names = [book.entries[i].name for i in sorted(ids)]
    updates = {u.name: u.update for u in ask(client, history.build(names, [plain(s) for s in sentences])).updates}
    book.record_event(n, day, sentences)
    for entity_id in ids:
        entry = book.entries[entity_id]
        if entry.name in updates and entry.entity.history:
            entry.entity.history[-1].event_update = updates[entry.name]


def _next_summary(client: LLMClient, rng: random.Random, story: str) -> str:
    options = ask(client, next_summaries.build(story), count_between(2, 10, "summaries")).summaries
    chosen = rng.choice(options)
    exclusive = ask(client, exclusive_summaries.build(chosen), count_between(2, 5, "summaries")).summaries
    return rng.choice(exclusive)


def _story(timeline: Timeline, limit: int) -> str:
    """The most recent events' outlines, newest last, within `limit` characters."""
    lines: list[str] = []
    for event in reversed(timeline.events):
        block = f"Event of {event.date}: " + " ".join(plain(i.sentence) for i in event.outline)
        if sum(map(len, lines)) + len(block) > limit:
            break
        lines.insert(0, block)
    return "\n".join(lines)


def _known(book: EntityBook) -> str:
    return "\n".join(f"{e.name} ({e.entity.entity_class}): {e.entity.description}" for e in book.entries.values())
