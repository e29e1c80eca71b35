"""The entity gold set: one JSON object per document (id, source, text, mentions with exact character offsets,
type and canonical name), loaded and checked before anything is scored."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ValidationError

from newskg.core.errors import NewskgError
from newskg.extract.entities.types import ENTITY_TYPES

# The project's annotated set (tests/fixtures/entities/README.md says how it was made).
DEFAULT_GOLD = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "entities" / "gold.jsonl"


class GoldMention(BaseModel):
    start: int
    end: int
    text: str
    type: str
    canonical: str


class GoldDocument(BaseModel):
    id: str
    source: str  # where the text comes from (a page's URL and sha256, or the paper and figure)
    text: str
    mentions: list[GoldMention]


class GoldError(NewskgError):
    pass


def problems(doc: GoldDocument) -> list[str]:
    """Everything wrong with one document: offsets out of range or not matching the text, unknown types, empty
    canonical names, overlapping spans."""
    found: list[str] = []
    previous_end = -1
    for m in sorted(doc.mentions, key=lambda m: (m.start, m.end)):
        where = f"{doc.id} [{m.start}:{m.end}] {m.text!r}"
        if not 0 <= m.start < m.end <= len(doc.text):
            found.append(f"{where}: offsets outside the text ({len(doc.text)} characters)")
        elif doc.text[m.start : m.end] != m.text:
            found.append(f"{where}: the text there is {doc.text[m.start : m.end]!r}")
        if m.type not in ENTITY_TYPES:
            found.append(f"{where}: type {m.type!r} is not one of {', '.join(ENTITY_TYPES)}")
        if not m.canonical.strip():
            found.append(f"{where}: empty canonical name")
        if m.start < previous_end:
            found.append(f"{where}: overlaps the previous mention")
        previous_end = max(previous_end, m.end)
    return found


def load_gold(path: Path) -> list[GoldDocument]:
    """The documents of a gold JSONL file, in file order; raises GoldError listing every problem found."""
    if not path.is_file():
        raise GoldError(f"no gold file at {path}", reason="gold_missing")
    docs: list[GoldDocument] = []
    errors: list[str] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            docs.append(GoldDocument.model_validate(json.loads(line)))
        except (json.JSONDecodeError, ValidationError) as exc:
            errors.append(f"line {number}: {exc}")
    ids = [d.id for d in docs]
    errors += [f"document id {i!r} appears more than once" for i in sorted({i for i in ids if ids.count(i) > 1})]
    for doc in docs:
        errors += problems(doc)
    if errors:
        shown = "; ".join(errors[:10]) + (f"; and {len(errors) - 10} more" if len(errors) > 10 else "")
        raise GoldError(f"{path}: {len(errors)} problem(s): {shown}", reason="gold_invalid")
    if not docs:
        raise GoldError(f"{path}: no documents", reason="gold_empty")
    return docs


SPLITS = ("all", "dev", "test")


def split_documents(docs: list[GoldDocument], split: str) -> list[GoldDocument]:
    """A deterministic half of the set, so rules are tuned on one half and measured on the other: the documents
    sorted by id, even positions are `dev` (tune on these), odd positions `test` (held out); `all` is every one.
    File order is kept (the evaluation's stream order)."""
    if split not in SPLITS:
        raise GoldError(f"unknown split {split!r} (one of {', '.join(SPLITS)})", reason="gold_split")
    if split == "all":
        return list(docs)
    position = {doc_id: n for n, doc_id in enumerate(sorted(d.id for d in docs))}
    parity = 0 if split == "dev" else 1
    return [d for d in docs if position[d.id] % 2 == parity]


def save_gold(docs: list[GoldDocument], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(d.model_dump(), ensure_ascii=False) for d in docs]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
