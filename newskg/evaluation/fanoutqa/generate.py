"""FanOutQA-style questions generated from our own graph as of a day (issue 14).

A question needs a hub entity, a relation and a window: the relation is "took part in one interaction with" (the
graph's SUBJECT_OF/OBJECT edges), the window is the `window_days` days ending on the as-of day, and the attribute
each neighbour carries is **the event day of its interaction with the hub** (the day the text states, else the
publication day). The answer is the dict {neighbour name: ISO day}, computed by Cypher (graph/store/
questions.py) from what was visible as of the day only.

A hub is kept only when it has at least `min_neighbours` neighbours and the question passes two checks:
- fan-out (the paper's requirement): no single article reported every neighbour's fact, so no one document
  answers the question;
- uniqueness: each neighbour has one event day with the hub in the window, and no two neighbours (or a
  neighbour and the hub) share a name, so the dict is the only right answer.
Rejections are counted by reason. The source is the NeoQA stream (`neoqa`: articles whose URL is on the synthetic
domain) or everything else (`news`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from newskg.core.timeaxes import day_iso, shift_day
from newskg.evaluation.fanoutqa.records import GeneratedQuestion, GraphEvidence, SubQuestion
from newskg.evaluation.kit.sources import SOURCES as SOURCES  # the sources the CLI offers, named here as before
from newskg.evaluation.kit.sources import source_params
from newskg.graph.store import questions as question_reads
from newskg.graph.store.asof import AsOf
from newskg.graph.store.rows import rows_of
from newskg.graph.store.store import GraphStore

QUESTION = (
    "For each entity that {hub} had a reported interaction with between {first} and {last}, on what day did that "
    "interaction take place?"
)
LIST_STEP = "Which entities had a reported interaction with {hub} between {first} and {last}?"
ATTRIBUTE_STEP = "On what day did the interaction between {hub} and {item} take place?"


@dataclass
class Fact:
    interaction_id: str
    event_day: int
    article_ids: list[str]
    urls: list[str]


@dataclass
class Neighbour:
    id: str
    name: str
    facts: list[Fact] = field(default_factory=list[Fact])

    @property
    def days(self) -> set[int]:
        return {f.event_day for f in self.facts}

    @property
    def articles(self) -> set[str]:
        return {a for f in self.facts for a in f.article_ids}


@dataclass(frozen=True)
class HubRow:
    """questions.HUB_CANDIDATES."""

    id: str
    name: str
    type: str | None
    neighbours: int


@dataclass(frozen=True)
class AnswerRow:
    """questions.FANOUT_ANSWER: one neighbour's days in the window."""

    name: str
    days: list[int]


@dataclass
class Generation:
    questions: list[GeneratedQuestion]
    rejected: Counter[str]
    hubs: int


def window(as_of: AsOf, window_days: int) -> dict[str, int]:
    return {"from_day": shift_day(as_of.day, -window_days), "to_day": as_of.day}


def generate(
    store: GraphStore,
    as_of: AsOf,
    source: str = "news",
    window_days: int = 365,
    min_neighbours: int = 5,
    max_hubs: int = 50,
    on_hub: Callable[[], None] | None = None,
) -> Generation:
    params = {**as_of.params(), **window(as_of, window_days), **source_params(source)}
    hubs = rows_of(HubRow, question_reads.hub_candidates(store, params, min_neighbours, max_hubs))
    questions: list[GeneratedQuestion] = []
    rejected: Counter[str] = Counter()
    for hub in hubs:
        neighbours = neighbours_of(question_reads.hub_facts(store, params, hub.id))
        reason = rejection(hub.name, neighbours, min_neighbours)
        if reason:
            rejected[reason] += 1
        else:
            questions.append(build_question(hub.id, hub.name, neighbours, as_of, source, params))
        if on_hub:
            on_hub()
    return Generation(questions, rejected, len(hubs))


def neighbours_of(rows: Sequence[Mapping[str, Any]]) -> list[Neighbour]:
    found: dict[str, Neighbour] = {}
    for r in rows:
        neighbour = found.setdefault(r["id"], Neighbour(r["id"], r["name"]))
        neighbour.facts.append(
            Fact(r["interaction_id"], int(r["event_day"]), sorted(r["article_ids"]), sorted(r["urls"]))
        )
    return sorted(found.values(), key=lambda n: (n.name.lower(), n.id))


def rejection(hub_name: str, neighbours: list[Neighbour], min_neighbours: int) -> str | None:
    """Why the hub gives no question (None: it gives one)."""
    if len(neighbours) < min_neighbours:
        return "too_few_neighbours"
    names = Counter(n.name.strip().lower() for n in neighbours)
    if any(count > 1 for count in names.values()) or hub_name.strip().lower() in names:
        return "not_unique_names"
    if any(len(n.days) != 1 for n in neighbours):
        return "not_unique_days"
    if one_article_answers(neighbours):
        return "one_article_holds_all"
    return None


def one_article_answers(neighbours: list[Neighbour]) -> bool:
    """True when some article reported every neighbour's fact (the question would not fan out)."""
    common = set[str].intersection(*(n.articles for n in neighbours)) if neighbours else set[str]()
    return bool(common)


def build_question(
    hub_id: str, hub_name: str, neighbours: list[Neighbour], as_of: AsOf, source: str, params: Mapping[str, Any]
) -> GeneratedQuestion:
    # params: the generation's query parameters (as of, window, source), values of mixed types
    first, last = day_iso(int(params["from_day"])), day_iso(int(params["to_day"]))
    qid = f"gen-{source}-{as_of.day}-{hub_id.removeprefix('e_')[:10]}"
    list_id = f"{qid}-list"
    steps = [
        SubQuestion(
            id=list_id,
            question=LIST_STEP.format(hub=hub_name, first=first, last=last),
            answer=[n.name for n in neighbours],
        )
    ]
    for k, n in enumerate(neighbours, 1):
        fact = n.facts[0]
        steps.append(
            SubQuestion(
                id=f"{qid}-{k}",
                question=ATTRIBUTE_STEP.format(hub=hub_name, item=n.name),
                answer=day_iso(fact.event_day),
                depends_on=[list_id],
                evidence=GraphEvidence(
                    interaction_id=fact.interaction_id,
                    article_ids=sorted(n.articles),
                    urls=sorted({u for f in n.facts for u in f.urls}),
                    event_day=fact.event_day,
                ),
            )
        )
    return GeneratedQuestion(
        id=qid,
        question=QUESTION.format(hub=hub_name, first=first, last=last),
        decomposition=steps,
        answer={n.name: day_iso(next(iter(n.days))) for n in neighbours},
        categories=["generated", source],
        as_of=day_iso(as_of.day),
        source=source,  # pyright: ignore[reportArgumentType]  (checked by source_params)
        hub_id=hub_id,
        hub_name=hub_name,
        from_day=int(params["from_day"]),
        to_day=int(params["to_day"]),
    )


def reproduce(store: GraphStore, question: GeneratedQuestion) -> dict[str, str]:
    """The question's answer recomputed as of its day by FANOUT_ANSWER (name → ISO day; several days joined)."""
    neighbours = [s.evidence for s in question.decomposition if isinstance(s.evidence, GraphEvidence)]
    ids = _neighbour_ids(store, question, [e.interaction_id for e in neighbours])
    params = {
        **AsOf.of(question.as_of).params(),
        **source_params(question.source),
        "from_day": question.from_day,
        "to_day": question.to_day,
    }
    rows = rows_of(AnswerRow, question_reads.fanout_answer(store, params, question.hub_id, ids))
    return {r.name: ",".join(day_iso(d) for d in sorted(r.days)) for r in rows}


def _neighbour_ids(store: GraphStore, question: GeneratedQuestion, interaction_ids: list[str]) -> list[str]:
    ids: list[str] = []
    for interaction in store.interactions(interaction_ids):
        other = interaction.object_id if interaction.subject_id == question.hub_id else interaction.subject_id
        if other:
            ids.append(other)
    return sorted(set(ids))


_GENERATED = TypeAdapter(list[GeneratedQuestion])


def save(questions: list[GeneratedQuestion], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_GENERATED.dump_json(questions, indent=1))


def load_generated(path: Path) -> list[GeneratedQuestion]:
    return _GENERATED.validate_json(path.read_bytes())
