"""A synthetic query log for the NeoQA fictional timelines, with the spike days it was built to have.

For a few people and organisations of each timeline (those its events name most often), every day of the
timeline's span (its first event − `pad` days … its last event + `pad`) carries a trickle of queries (0 or 1 a
day, the bare name), and every day of an event that names the entity carries a burst of at least `burst` queries
("name", "name news", "name <a word of the event>"). A few long-tail queries per entity are issued by fewer than
five distinct users, so the privacy rule has something to drop. Users are drawn so that every burst query is
issued by at least five distinct users.

The burst is sized so the spike rule (3-day rolling sum > mean + 1σ) flags exactly the days whose window holds a
burst day: a trailing sum with a burst is at least `burst`, one without is at most `window` (the trickle), and
the threshold lies between the two as long as bursts cover under about a third of the span. The known spike list
(`<log>.spikes.json`) states those days; the tests check the detector finds exactly them. Same seed, same bytes."""

from __future__ import annotations

import csv
import datetime as dt
import json
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from newskg.core.timeaxes import day_from_key, day_iso, day_key
from newskg.evaluation.neoqa.records import Timeline

QUERY_ENTITY_CLASSES = ("person", "organization")
MENTION = re.compile(r"\|([A-Z]+-\d+)\}")
STOPWORDS = {"about", "after", "again", "against", "their", "there", "which", "while", "where", "really", "comes"}
RARE_TEMPLATES = ("{name} home address", "{name} phone number", "{name} private email")


@dataclass(frozen=True)
class LogEntry:
    day: int
    minute: int
    query: str
    user_id: str


class KnownRule(TypedDict):
    window: int
    sigma: float
    min_users: int


class KnownEntity(TypedDict):
    entity: str
    neoqa_id: str
    timeline_id: str
    event_days: list[int]
    spike_days: list[int]


class KnownSpikesFile(TypedDict):
    """`<log>.spikes.json`: the log, how it was made, and each entity's known spike days."""

    log: str
    seed: int
    rule: KnownRule
    rows: int
    dropped_queries: int
    entities: list[KnownEntity]


@dataclass(frozen=True)
class KnownSpikes:
    entity: str
    neoqa_id: str
    timeline_id: str
    event_days: list[int]
    spike_days: list[int]


def _event_entities(timeline: Timeline) -> dict[str, list[int]]:
    """NeoQA entity id → days of the events whose outline names it."""
    days: dict[str, list[int]] = {}
    for event in timeline.events:
        for entity_id in sorted({m for item in event.outline for m in MENTION.findall(item.sentence)}):
            days.setdefault(entity_id, []).append(day_key(event.date))
    return days


def _names(timeline: Timeline) -> dict[str, tuple[str, str]]:
    """NeoQA entity id → (name, class) from the latest snapshot."""
    if not timeline.named_entity_snapshots:
        return {}
    groups = timeline.named_entity_snapshots[-1].named_entities
    return {e.id: (e.name, e.entity_class) for group in groups.values() for e in group}


def _keyword(rng: random.Random, summary: str) -> str:
    words = sorted({w.lower() for w in re.findall(r"[A-Za-z]{6,}", summary)} - STOPWORDS)
    return rng.choice(words) if words else "update"


def _span(event_days: list[int], pad: int) -> list[int]:
    start = day_from_key(min(event_days)) - dt.timedelta(days=pad)
    end = day_from_key(max(event_days)) + dt.timedelta(days=pad)
    return [day_key(start + dt.timedelta(days=i)) for i in range((end - start).days + 1)]


def _issue(rng: random.Random, users: list[str], day: int, text: str, times: int) -> list[LogEntry]:
    """`times` issues of one query on one day by distinct users while the pool lasts (a random starting user)."""
    offset = rng.randrange(len(users))
    return [LogEntry(day, rng.randrange(24 * 60), text, users[(offset + i) % len(users)]) for i in range(times)]


def timeline_log(
    rng: random.Random, timeline: Timeline, entities: int, burst: int, pad: int, window: int
) -> tuple[list[LogEntry], list[KnownSpikes], int]:
    """(log entries, known spikes, long-tail queries the privacy rule must drop) for one timeline."""
    by_entity = _event_entities(timeline)
    names = _names(timeline)
    chosen = sorted(
        (i for i in by_entity if i in names and names[i][1] in QUERY_ENTITY_CLASSES),
        key=lambda i: (-len(by_entity[i]), i),
    )[:entities]
    span = _span([day_key(e.date) for e in timeline.events], pad)
    keywords = {day_key(e.date): _keyword(rng, e.initial_summary) for e in timeline.events}
    entries: list[LogEntry] = []
    known: list[KnownSpikes] = []
    rare = 0
    for index, entity_id in enumerate(chosen):
        name = names[entity_id][0].lower()
        users = [f"{timeline.timeline_id}:{index}:u{n:03d}" for n in range(60)]
        for day in span:  # the trickle: the bare name, 0 or 1 a day
            if rng.random() < 0.5:
                entries.append(LogEntry(day, rng.randrange(24 * 60), name, rng.choice(users)))
        for day in by_entity[entity_id]:
            for text in (name, f"{name} news", f"{name} {keywords[day]}"):
                entries += _issue(rng, users, day, text, burst // 3 + rng.randrange(1, 8))
        for template in RARE_TEMPLATES:
            text = template.format(name=name)
            entries += [
                LogEntry(rng.choice(span), rng.randrange(24 * 60), text, user)
                for user in rng.sample(users, rng.randrange(1, 5))
            ]
            rare += 1
        spikes = sorted({d for e in by_entity[entity_id] for d in _window_after(e, window)} & set(span))
        known.append(KnownSpikes(name, entity_id, timeline.timeline_id, sorted(set(by_entity[entity_id])), spikes))
    return entries, known, rare


def _window_after(day: int, window: int) -> list[int]:
    """The days whose trailing window of `window` days holds `day`."""
    return [day_key(day_from_key(day) + dt.timedelta(days=i)) for i in range(window)]


def generate_log(
    timelines: list[Timeline],
    out: Path,
    seed: int = 0,
    entities: int = 3,
    burst: int = 45,
    pad: int = 10,
    window: int = 3,
) -> KnownSpikesFile:
    """Write the log (JSONL, or CSV when `out` ends in .csv) and `<out>.spikes.json`; return the spike file's
    content."""
    entries: list[LogEntry] = []
    known: list[KnownSpikes] = []
    dropped = 0
    for timeline in timelines:
        rng = random.Random(f"querylog:{seed}:{timeline.timeline_id}")
        found, spikes, rare = timeline_log(rng, timeline, entities, burst, pad, window)
        entries += found
        known += spikes
        dropped += rare
    entries.sort(key=lambda e: (e.day, e.minute, e.query, e.user_id))
    out.parent.mkdir(parents=True, exist_ok=True)
    _write(entries, out)
    content: KnownSpikesFile = {
        "log": out.name,
        "seed": seed,
        "rule": {"window": window, "sigma": 1.0, "min_users": 5},
        "rows": len(entries),
        "dropped_queries": dropped,
        "entities": [
            {
                "entity": k.entity,
                "neoqa_id": k.neoqa_id,
                "timeline_id": k.timeline_id,
                "event_days": k.event_days,
                "spike_days": k.spike_days,
            }
            for k in known
        ],
    }
    spikes_path(out).write_text(json.dumps(content, indent=1), encoding="utf-8")
    return content


def spikes_path(log: Path) -> Path:
    return log.with_name(log.name + ".spikes.json")


def _timestamp(entry: LogEntry) -> str:
    return f"{day_iso(entry.day)}T{entry.minute // 60:02d}:{entry.minute % 60:02d}:00Z"


def _write(entries: list[LogEntry], out: Path) -> None:
    with out.open("w", encoding="utf-8", newline="") as handle:
        if out.suffix.lower() == ".csv":
            writer = csv.writer(handle)
            writer.writerow(["timestamp", "query", "user_id"])
            writer.writerows([_timestamp(e), e.query, e.user_id] for e in entries)
            return
        for e in entries:
            handle.write(json.dumps({"timestamp": _timestamp(e), "query": e.query, "user_id": e.user_id}) + "\n")
