"""An optional user-supplied knowledge base (JSONL: id, name, aliases, type, description), e.g. a Wikidata
subset: its entries seed the alias index, so their ids become the linking targets."""

from __future__ import annotations

import json
from pathlib import Path

from newskg.core.errors import NewskgError
from newskg.extract.entities.alias_index import AliasIndex, Recorded
from newskg.extract.entities.names import name_key
from newskg.extract.entities.types import ENTITY_TYPES, LABEL_TO_TYPE


class KBError(NewskgError, ValueError):
    """A knowledge-base file line that is not a valid entry: which file, which line, what is wrong."""

    REASON = "invalid_kb_entry"


def load_kb(path: Path, index: AliasIndex) -> int:
    count = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            kind = LABEL_TO_TYPE.get(entry["type"], entry["type"])
            if kind not in ENTITY_TYPES:
                raise KBError(f"type {entry['type']!r} is not one of {', '.join(ENTITY_TYPES)}")
            recorded = Recorded(aliases=entry.get("aliases") or [], mentions=0, description=entry.get("description"))
            entity = index.add(str(entry["id"]), entry["name"], kind, recorded=recorded)
            entity.from_kb = True
            _merge_namesakes(index, entity.id, [entry["name"], *(entry.get("aliases") or [])], kind)
        except (json.JSONDecodeError, KeyError, TypeError, KBError) as exc:
            raise KBError(f"{path}:{number}: {exc}") from exc
        count += 1
    return count


def _merge_namesakes(index: AliasIndex, kb_id: str, names: list[str], kind: str) -> None:
    """Entities the stream created before the KB was loaded under one of its names, of its type, join the KB
    entry through an alias edge (always visible, like the KB itself): the KB id is the canonical one."""
    for name in names:
        for other in index.lookup_ids(name_key(name)):
            entity = index.entities[other]
            if not entity.from_kb and entity.type == kind:
                index.merge(other, kb_id)
