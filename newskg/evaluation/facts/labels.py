"""Labels read by a person against the chunk, stored in one JSONL file keyed by the item's text and its chunk's
(collect.item_key): an unchanged fact keeps its label, and only new facts need reading. README.md holds the
rubric."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ValidationError

from newskg.core.errors import NewskgError

DEFAULT_LABELS = Path(__file__).resolve().parents[3] / "bench" / "data" / "fact_labels.jsonl"


class FactLabel(BaseModel):
    kind: Literal["fact"] = "fact"
    key: str
    text: str  # the fact, kept for whoever reads the file
    readable: bool  # a statement a reader understands, not garbled or cut mid-thought
    true: bool  # the chunk says it
    subject_ok: bool  # its subject is the entity the statement is about
    note: str = ""

    @property
    def clean(self) -> bool:
        return self.readable and self.true and self.subject_ok


class MentionLabel(BaseModel):
    kind: Literal["mention"] = "mention"
    key: str
    text: str
    type: str
    ok: bool  # a real name, of the type given
    note: str = ""


Label = FactLabel | MentionLabel


class LabelError(NewskgError):
    REASON = "bad_labels"


class LabelStore:
    def __init__(self, facts: dict[str, FactLabel], mentions: dict[str, MentionLabel]):
        self.facts = facts
        self.mentions = mentions

    @classmethod
    def load(cls, path: Path) -> LabelStore:
        facts: dict[str, FactLabel] = {}
        mentions: dict[str, MentionLabel] = {}
        if not path.exists():
            return cls(facts, mentions)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if data.get("kind") == "mention":
                    label = MentionLabel.model_validate(data)
                    mentions[label.key] = label
                else:
                    fact = FactLabel.model_validate(data)
                    facts[fact.key] = fact
            except (json.JSONDecodeError, ValidationError, AttributeError) as exc:
                raise LabelError(f"{path}:{number}: not a label ({exc})") from exc
        return cls(facts, mentions)
