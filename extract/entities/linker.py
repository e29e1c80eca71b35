"""Mentions → canonical entities: within the article first (short forms), then across documents through the
alias index as of the chunk (what was published on or before its day and ingested before it); every decision
carries its explanation (`--explain`)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

from spacy.tokens import Doc

from core.ids import entity_id
from core.records import Entity
from extract.entities.alias_index import ALWAYS, AliasIndex, Seen
from extract.entities.coref import Canonical, full_forms, resolve
from extract.entities.mentions import find_mentions
from extract.entities.names import name_key, tokens_of
from extract.entities.rules import EntityRules


@dataclass(frozen=True)
class LinkedMention:
    start: int
    end: int
    text: str
    type: str
    entity_id: str
    name: str  # the canonical name
    method: str  # article | exact | alias | acronym | fuzzy | new
    explanation: str


@dataclass
class _ArticleMemory:
    fulls: list[Canonical] = field(default_factory=list)
    person_tokens: set[str] = field(default_factory=set)
    # name key → entity linked earlier in this article: its chunks share one ingestion instant, so the index
    # (as of "ingested strictly before") does not show them each other's entities.
    linked: dict[str, str] = field(default_factory=dict)


def context_words(doc: Doc) -> set[str]:
    return {t.lower_ for t in doc if t.is_alpha and not t.is_stop and len(t) > 3 and not t.ent_type_}


def first_seen(day: int | None, ingested_ms: int | None) -> Seen | None:
    """The as-of key of a chunk: (publication day, ingestion ms); None when unknown (consult everything)."""
    return None if day is None or ingested_ms is None else (day, ingested_ms)


class Linker:
    def __init__(self, index: AliasIndex, articles_remembered: int = 4096, rules: EntityRules = EntityRules()):
        self.index = index
        self.rules = rules
        self._articles: OrderedDict[str, _ArticleMemory] = OrderedDict()
        self._limit = articles_remembered

    def _memory(self, article_id: str) -> _ArticleMemory:
        memory = self._articles.pop(article_id, None) or _ArticleMemory()
        self._articles[article_id] = memory
        while len(self._articles) > self._limit:
            self._articles.popitem(last=False)
        return memory

    def link(self, doc: Doc, article_id: str, as_of: Seen | None = None) -> list[LinkedMention]:
        """`as_of`: the chunk's (publication day, ingestion ms): the index answers as of it, and what this chunk
        teaches the index is remembered as first seen then."""
        memory = self._memory(article_id)
        mentions = find_mentions(doc, memory.person_tokens | self.index.person_name_parts(as_of), self.rules)
        fulls = memory.fulls + [f for f in full_forms([(m.name, m.type) for m in mentions]) if f not in memory.fulls]
        context = context_words(doc)
        linked = [self._link_one(m, fulls, context, as_of, memory) for m in mentions]
        memory.fulls = fulls
        memory.person_tokens.update(t for f in fulls if f.type == "PERSON" for t in tokens_of(f.name))
        return linked

    def _link_one(
        self, mention, fulls: list[Canonical], context: set[str], as_of: Seen | None, memory: _ArticleMemory
    ) -> LinkedMention:
        canon = (
            resolve(mention.name, mention.type, fulls)
            if self.rules.short_form_coref
            else Canonical(mention.name, mention.type)
        )
        key = name_key(canon.name)
        decision = None if key in memory.linked else self.index.lookup(canon.name, canon.type, context, as_of)
        if key in memory.linked:
            eid, method = memory.linked[key], "article"
            why = f"{canon.name!r} was linked earlier in the article"
        elif decision:
            eid, method, why = decision.entity_id, decision.method, decision.explanation
        else:
            eid, method = entity_id(canon.name, canon.type), "new"
            why = f"no known entity matches {canon.name!r} ({canon.type}): new entity"
        seen = as_of or ALWAYS
        known = self.index.add(eid, canon.name, canon.type, context=context, seen=seen)
        memory.linked.setdefault(key, eid)
        if mention.name and mention.name != known.name:
            self.index.add_alias(eid, mention.name, seen)
        explanation = "; ".join(p for p in (canon.explanation, why) if p)
        return LinkedMention(mention.start, mention.end, mention.text, known.type, eid, known.name, method, explanation)

    def entities(self, mentions: list[LinkedMention]) -> list[Entity]:
        out = {}
        for m in mentions:
            known = self.index.entities[m.entity_id]
            out[m.entity_id] = Entity(
                id=known.id,
                name=known.name,
                type=known.type,
                aliases=sorted(known.aliases),
                description=known.description,
            )  # keys
        return list(out.values())
