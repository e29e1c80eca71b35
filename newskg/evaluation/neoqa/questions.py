"""Questions from the outline items that hold their answer (NeoQA §4.2, C.2): time-span questions over two dated
items, multi-hop questions through a bridge person (one item says who holds a role, the other what that person
proposed or said), and from every multi-hop question two false-premise and two uncertain-specificity variants
that share its answer options. Each question carries 5 distractors and "Unanswerable" (7 options).

Ambiguity is refused at the source: a question is only written when no other item up to its date could answer it
differently, which is what the paper's answerability filter (D.1) removes after the fact."""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from newskg.evaluation.neoqa import vocab
from newskg.evaluation.neoqa.frames import Fact
from newskg.evaluation.neoqa.kb import EntityBook
from newskg.evaluation.neoqa.records import UNANSWERABLE, Distractor, Question, Timeline, plain
from newskg.evaluation.neoqa.timeline import World

SPANS = (1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 14, 15, 20, 21, 28, 30)


def question_id(*parts: str) -> str:
    return hashlib.sha256("\x1f".join(parts).encode("utf-8")).hexdigest()[:32]


def write_questions(rng: random.Random, world: World) -> list[Question]:
    events = world.timeline.events
    questions: list[Question] = []
    for i, j in itertools.combinations_with_replacement(range(len(events)), 2):
        facts_i, facts_j = _facts(world, i), _facts(world, j)
        span = _time_span(rng, world, facts_i, facts_j, j)
        if span:
            questions.append(span)
        for hop in _multi_hops(rng, world, facts_i + (facts_j if i != j else []), {f"N{i}", f"N{j}"}, j):
            questions.extend([hop, *_false_premises(rng, world, hop), *_uncertain(rng, world, hop)])
    return questions


def _facts(world: World, index: int) -> list[Fact]:
    return [world.facts[item.id] for item in world.timeline.events[index].outline]


@dataclass(frozen=True)
class Draft:
    """What a question asks before it is placed on its timeline: the wording, the answer, the wrong options and the
    ids of the facts (outline items) that answer it."""

    text: str
    answer: str
    distractors: list[Distractor]
    evidence: list[str]


def make_question(
    timeline: Timeline,
    event_index: int,
    category: str,
    draft: Draft,
    parent: str | None = None,
    meta: dict[str, str | list[str] | None] | None = None,
) -> Question:
    """A question asked as of its event's date, options in the release's order (answer first, "Unanswerable"
    last); both generators build theirs here."""
    event = timeline.events[event_index]
    text, answer, distractors, evidence = draft.text, draft.answer, draft.distractors, draft.evidence
    return Question(
        timeline_id=timeline.timeline_id,
        question_id=question_id(timeline.timeline_id, category, text),
        parent_question_id=parent,
        evidence_ids=evidence,
        question=text,
        answer=answer,
        category=category,
        distractors=distractors,
        date=event.date,
        created_at=event_index,
        answer_options=[answer, *(d.answer for d in distractors), UNANSWERABLE],
        meta=meta or {},
    )


def day_distractors(rng: random.Random, days: int, evidence: list[str]) -> list[Distractor]:
    """Five near-miss day counts for a time-span answer."""
    wrong = sorted({days + s for s in SPANS} | {days - s for s in SPANS if days - s > 0})
    return [
        Distractor(
            answer=f"{n} days",
            explanation="a miscount of the days between the two dates",
            distractor_sentences=evidence,
        )
        for n in rng.sample(wrong, 5)
    ]


# --- time-span


def _time_span(rng: random.Random, world: World, facts_i: list[Fact], facts_j: list[Fact], j: int) -> Question | None:
    clauses = Counter(plain(_clause(f)) for f in _dated_until(world, j))

    def unique(fact: Fact) -> bool:  # no other dated item up to the question's event reads the same moment
        return clauses[plain(_clause(fact))] == 1

    pairs = [
        (a, b)
        for a in facts_i
        for b in facts_j
        if a.day and b.day and a.id != b.id and a.day != b.day and unique(a) and unique(b)
    ]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    first, second = sorted((a, b), key=_day)
    days = (_day(second) - _day(first)).days
    distractors = day_distractors(rng, days, [first.id, second.id])
    text = f"How many days passed between {plain(_clause(first))} and {plain(_clause(second))}?"
    draft = Draft(text, f"{days} days", distractors, [first.id, second.id])
    return make_question(world.timeline, j, "time-span", draft)


def _day(fact: Fact) -> dt.date:
    """A dated fact's date (the pairs of a time-span question are dated facts)."""
    if fact.day is None:
        raise ValueError(f"a {fact.kind} fact has no date")
    return fact.day


def _clause(fact: Fact) -> str:
    """A dated fact's moment as a noun phrase (every dated frame has one)."""
    if fact.clause is None:
        raise ValueError(f"a dated {fact.kind} fact has no clause")
    return fact.clause


def _book(world: World) -> EntityBook:
    """The entity book of a generated world (set by the generator before any question is asked)."""
    if world.book is None:
        raise ValueError(f"timeline {world.timeline.timeline_id} has no entity book")
    return world.book


def _dated_until(world: World, up_to: int) -> list[Fact]:
    return [f for n in range(up_to + 1) for f in _facts(world, n) if f.day]


# --- multi-hop and the unanswerable variants built from it


def _multi_hops(
    rng: random.Random, world: World, facts: list[Fact], events: set[str], j: int, most: int = 2
) -> list[Question]:
    roles = {f.slot("person"): f for f in facts if f.kind == "role"}
    answers = [f for f in facts if f.kind in ("proposal", "quote") and f.slot("person") in roles]
    # both events must contribute when they differ, so the question really spans them
    pairs = [
        (roles[f.slot("person")], f) for f in answers if {_event_of(roles[f.slot("person")]), _event_of(f)} == events
    ]
    return [_multi_hop(rng, world, role, answer, j) for role, answer in rng.sample(pairs, min(most, len(pairs)))]


def _multi_hop(rng: random.Random, world: World, role: Fact, answer: Fact, j: int) -> Question:
    holder = f"the {role.slot('role')} of {_book(world).entries[role.slot('org')].name}"
    text, pool = _hop_text(holder, answer)
    distractors = [
        Distractor(
            answer=d,
            explanation="stated elsewhere in the story, or plausible for it",
            distractor_sentences=_stating(world, d),
        )
        for d in rng.sample(pool, 5)
    ]
    meta = {
        "bridge_entity": answer.slot("person"),
        "holder": holder,
        "answer_kind": answer.kind,
        "topic": answer.slots.get("topic"),
        "role_org": role.slot("org"),
        "role": role.slot("role"),
    }
    draft = Draft(text, answer.slot("answer"), distractors, [role.id, answer.id])
    return make_question(world.timeline, j, "multi-hop", draft, meta=meta)


def _event_of(fact: Fact) -> str:
    return fact.id.split("-")[0]


def _hop_text(holder: str, answer: Fact) -> tuple[str, list[str]]:
    if answer.kind == "proposal":
        pool = [x for x in _all_initiatives(answer) if x != answer.slot("answer")]
        return f"What did {holder} propose?", pool
    pool = [x for x in vocab.OUTCOMES if x != answer.slot("answer")]
    return f"According to {holder}, what would the {answer.slot('topic')} do?", pool


def _all_initiatives(answer: Fact) -> list[str]:
    return next(g["initiatives"] for g in vocab.GENRES.values() if answer.slot("answer") in g["initiatives"])


def _stating(world: World, text: str) -> list[str]:
    return [fid for fid, fact in world.facts.items() if text in fact.sentence][:3]


def _false_premises(rng: random.Random, world: World, hop: Question) -> list[Question]:
    """The holder is swapped for one the evidence contradicts: a role at the same organisation that nobody with
    a matching statement holds, or the same role at another organisation."""
    meta = hop.meta
    speakers = _speakers(world, meta)
    org_name = _book(world).entries[meta["role_org"]].name
    wrong = [
        f"the {r} of {org_name}"
        for r in vocab.ROLES
        if r != meta["role"] and world.holder(meta["role_org"], r) not in speakers
    ]
    wrong += [
        f"the {meta['role']} of {o.name}"
        for o in _book(world).of_class("organization")
        if o.id != meta["role_org"] and world.holder(o.id, meta["role"]) not in speakers
    ]
    return [
        _variant(world, hop, "false-premise", hop.question.replace(meta["holder"], holder), {"premise": holder})
        for holder in rng.sample(wrong, min(2, len(wrong)))
    ]


def _speakers(world: World, meta: Mapping[str, object]) -> set[str]:
    """People who made a statement of the same kind (and topic): a swapped holder must not be one of them, or
    the variant would be answerable after all."""
    return {
        f.slot("person")
        for f in world.facts.values()
        if f.kind == meta["answer_kind"] and f.slots.get("topic") == meta["topic"]
    }


def _uncertain(rng: random.Random, world: World, hop: Question) -> list[Question]:
    """A detail no item states is added, so the evidence can neither confirm nor deny it."""
    stated = " ".join(plain(f.sentence) for f in world.facts.values())
    details = [d for d in vocab.DETAILS if d not in stated]
    return [
        _variant(world, hop, "uncertain-specificity", hop.question.rstrip("?") + f" {d}?", {"detail": d})
        for d in rng.sample(details, min(2, len(details)))
    ]


def _variant(
    world: World, hop: Question, category: str, text: str, meta: dict[str, str | list[str] | None]
) -> Question:
    draft = Draft(text, hop.answer, hop.distractors, hop.evidence_ids)
    return make_question(world.timeline, hop.created_at, category, draft, parent=hop.question_id, meta=meta)
