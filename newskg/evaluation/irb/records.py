"""The records an IRB set is made of, shared by generation (evaluation/irb/generate*.py) and evaluation
(evaluation/irb/run*.py). One JSON object per line, versioned like every record of the project.

Documents are articles, passages are chunks: a question's qrels name the articles whose chunks state its
keypoints (relevance 1), and retrieval ranks articles by their best chunk (max-passage)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Hops = Literal[1, 2]
Premise = Literal["valid", "false"]
Paraphrase = Literal["none", "short_name", "relative_date", "spelled_number"]
Expected = Literal["answer", "reject_premise"]  # a false-premise question is answered by naming the false premise
Wording = Literal["template", "llm"]
Source = Literal["news", "neoqa"]


class Keypoint(BaseModel):
    """One graph fact the question rests on, with the source sentences that state it (its passages)."""

    model_config = ConfigDict(frozen=True)

    text: str  # the interaction's text, decontextualised: names in full, the event day written out
    interaction_id: str
    subject_id: str
    object_id: str | None
    event_day: int  # yyyymmdd
    chunk_ids: list[str]  # the passages that state it (visible as of the question's day)
    article_ids: list[str]


class MaskedNode(BaseModel):
    """The entity the question asks for (single-hop), or the bridge resolved on the way (2-hop)."""

    model_config = ConfigDict(frozen=True)

    entity_id: str
    name: str
    role: Literal["subject", "object"]


class IRBQuestion(BaseModel):
    model_config = ConfigDict(frozen=True)

    kind: Literal["irb_question"] = "irb_question"
    schema_version: Literal[1] = 1
    id: str  # content hash of (as_of, question, answer): same seed, same ids
    question: str
    answer: str  # the masked node's name; for a false premise, the true value the premise contradicts
    aliases: list[str] = Field(default_factory=list)  # other accepted answer strings (short names, ...)
    expected: Expected = "answer"
    false_premise: str | None = None  # what a false-premise question wrongly presupposes, in words
    as_of: int  # yyyymmdd: generated from, and to be answered from, the graph as it stood that day
    hops: Hops
    premise: Premise = "valid"
    paraphrase: Paraphrase = "none"
    popularity: int  # mentions of the asked-for entity as of the day (the paper's entity-popularity attribute)
    masked: MaskedNode
    bridge: MaskedNode | None = None  # 2-hop: the entity resolved by the inner question
    keypoints: list[Keypoint]
    qrels: dict[str, int]  # article id → relevance (1): the documents holding the keypoints
    source: Source
    wording: Wording = "template"
    # Added by generation (optional, defaults keep older lines valid): the phrases any rewording must keep as
    # written (the paraphrased name, the date phrase), and the perturbed node of a false premise, so the premise
    # can be re-checked against the graph: a swapped name ("C. Smith") or a distorted day (yyyymmdd).
    keep: list[str] = Field(default_factory=list)
    false_name: str | None = None
    false_day: int | None = None
