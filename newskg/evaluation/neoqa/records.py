"""The synthetic fictional-timeline dataset (NeoQA, Glockner et al., §4 and appendix E) as typed records.

Field names follow the public NeoQA release (timelines / news / questions / instances), so a user holding the
release loads it with the same models; extra fields of the release are kept (extra="allow"), never dropped.
Entity markup in outline sentences and article passages is `{surface text|ENTITY-ID}`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict

from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from newskg.evaluation.neoqa.metrics import Summary

MARKUP = re.compile(r"\{([^{}|]+)\|([A-Z]+-\d+)\}")
UNANSWERABLE = "Unanswerable"
ENTITY_CLASSES = ("person", "organization", "location", "product", "art", "event", "building", "miscellaneous")
CATEGORIES = ("multi-hop", "time-span", "false-premise", "uncertain-specificity")
Answerability = Literal["answerable-sufficient", "answerable-insufficient", "unanswerable"]


def plain(text: str) -> str:
    """Markup off: `{Selvia Renek|PERSON-3}` → `Selvia Renek`."""
    return MARKUP.sub(r"\1", text)


def mark_names(text: str, marks: dict[str, str]) -> str:
    """Wrap each known name in its markup (`marks`: name → `{name|ID}`), longest names first, never inside
    markup already there."""
    for name in sorted(marks, key=len, reverse=True):
        parts = re.split(r"(\{[^{}]*\})", text)
        text = "".join(p if p.startswith("{") else p.replace(name, marks[name]) for p in parts)
    return text


def normalise_category(value: str) -> str:
    """The release and the paper spell categories several ways ("false premise", "false_premise")."""
    return value.strip().lower().replace("_", "-").replace(" ", "-")


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class OutlineItem(_Open):
    sentence: str
    id: str
    pos: int


class UsedEntity(_Open):
    id: str
    new: bool


class Event(_Open):
    event_id: str
    created_at: int
    initial_summary: str
    date: str
    used_named_entities: list[UsedEntity] = []
    outline: list[OutlineItem]


class HistoryEntry(_Open):
    created_at: int
    event_update: str
    date: str


class NamedEntity(_Open):
    """Type-specific properties (a person's profession, a building's floors …) ride along as extra fields."""

    id: str
    name: str
    entity_class: str
    description: str
    type: str | None = None
    created_at: int
    last_updated: str
    history: list[HistoryEntry] = []


class EntitySnapshot(_Open):
    created_at: int
    for_event: str
    date: str
    named_entities: dict[str, list[NamedEntity]]


class Genre(_Open):
    category: str
    genre_id: str


class EventType(_Open):
    category: str
    event_type_id: str


class Timeline(_Open):
    timeline_id: str
    genre: Genre
    event_type: EventType
    initial_summary: str
    events: list[Event]
    named_entity_snapshots: list[EntitySnapshot] = []

    def items(self) -> dict[str, OutlineItem]:
        return {item.id: item for event in self.events for item in event.outline}


class NewsArticle(_Open):
    timeline_id: str
    article_id: str
    event_id: str
    headline: str
    passages: list[str]
    news_profile: str
    used_items: list[str]
    unsure_evidences: list[str] = []
    created_at: int
    date: str

    def text(self) -> str:
        """Headline and body without markup: what a reader sees."""
        return "\n\n".join([plain(self.headline), *(plain(p) for p in self.passages)])

    def body(self) -> str:
        """The passages without markup: what the stream carries as text (the headline travels as the title, so
        sentence splitting never runs a headline into the first sentence)."""
        return "\n\n".join(plain(p) for p in self.passages)


class Distractor(_Open):
    answer: str
    explanation: str = ""
    # Read and written as "distractor-sentences" (the release format); built in code by its field name, which is
    # what the type checker sees as the parameter (a plain `alias` would make it the hyphenated one).
    distractor_sentences: list[str] = Field(
        default_factory=list[str],
        validation_alias=AliasChoices("distractor-sentences", "distractor_sentences"),
        serialization_alias="distractor-sentences",
    )


class Question(_Open):
    timeline_id: str
    question_id: str
    parent_question_id: str | None = None
    evidence_ids: list[str]
    question: str
    answer: str
    category: str
    distractors: list[Distractor]
    date: str
    created_at: int = 0
    sufficient_article_ids: list[str] = []
    all_sufficient_article_id_combinations: list[list[str]] = []
    answer_options: list[str] = []
    # Free-form notes (the generators' bridge entity, premise, detail …; the release's own keys): JSON as read.
    meta: dict[str, Any] = {}


class Instance(Question):
    """A question with its preselected evidence. `use_evidence_documents` holds article ids (our files and the
    downloaded release) or whole articles (the Hugging Face copy of the release)."""

    instance_id: str
    answerable: Answerability
    use_evidence_documents: list[str | NewsArticle]
    gold_answer_idx: int
    removed_evidence: str | None = None  # insufficient instances: the outline item whose articles were removed
    instance_set: str = "main"
    irrelevant_documents: int | None = None

    @property
    def expects_deflection(self) -> bool:
        return self.answerable != "answerable-sufficient"


class Prediction(TypedDict):
    """One answered instance in the report's `predictions`."""

    instance_id: str
    instance_set: str
    category: str
    answerable: Answerability
    gold_answer_idx: int
    predicted_answer: int
    correct: bool
    rationale: str


@dataclass
class RunResult:
    """One benchmark run's scores (evaluation/neoqa/run.py makes it, evaluation/neoqa/report.py writes it)."""

    answerer: str
    summary: Summary
    by_set: dict[str, Summary]
    predictions: list[Prediction] = field(default_factory=list[Prediction])
