"""Mentions → canonical entities: within the article first (short forms), then across documents through the
alias index as of the chunk (what was published on or before its day and ingested before it); every decision
carries its explanation (`--explain`)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field, replace

from spacy.tokens import Doc

from newskg.core.ids import named_entity_id, normalise_text
from newskg.core.records import Entity
from newskg.extract.entities.alias_index import ALWAYS, AliasIndex, KnownEntity, Seen
from newskg.extract.entities.coref import (
    Antecedent,
    Canonical,
    Reference,
    full_forms,
    resolve,
    resolve_descriptions,
    resolve_pronouns,
)
from newskg.extract.entities.evidence import DESCRIPTION_NOUNS, gender_of
from newskg.extract.entities.journal import ArticleMemory, IndexOp, LinkJournal
from newskg.extract.entities.mentions import KnownName, RawMention, find_mentions
from newskg.extract.entities.names import name_key, tokens_of
from newskg.extract.entities.rules import EntityRules


@dataclass(frozen=True)
class LinkedMention:
    start: int
    end: int
    text: str
    type: str
    entity_id: str
    name: str  # the canonical name
    method: str  # article | exact | alias | acronym | surname | fuzzy | new; pronoun | description (coreference)
    explanation: str

    @property
    def is_reference(self) -> bool:
        """A pronoun or description resolved to an entity, not a name: no markup, no alias."""
        return self.method in REFERENCE_METHODS


REFERENCE_METHODS = frozenset({"pronoun", "description"})


@dataclass
class _ArticleMemory:
    fulls: list[Canonical] = field(default_factory=list[Canonical])
    person_tokens: set[str] = field(default_factory=set[str])
    # name key → entity linked earlier in this article: its chunks share one ingestion instant, so the index
    # (as of "ingested strictly before") does not show them each other's entities.
    linked: dict[str, str] = field(default_factory=dict[str, str])
    # first key word → the names linked earlier in this article, with their types (the known-name matcher)
    names: dict[str, set[KnownName]] = field(default_factory=dict[str, set[KnownName]])
    # entity id → type → vote weight of this article's mentions (the index does not show them to each other)
    votes: dict[str, dict[tuple[str, Seen], int]] = field(default_factory=dict[str, dict[tuple[str, Seen], int]])


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
        self.journal: LinkJournal | None = None  # what the last `link` taught (extract/entities/journal.py)
        # The journal ids whose operations the index holds for good (replayed from the graph, committed after a
        # write, or read off the shared linking log): a journal is applied once, whoever linked it. (An id per chunk
        # record, ~100 B: less than what the index itself keeps per chunk, its votes and context words.)
        self.held: set[str] = set()
        self._ops: list[IndexOp] = []
        # While a transaction is open (`mark`): per linked or replayed chunk, the article memories as they were
        # before it (the LRU order, and the one memory it changes with a copy of its content), so `rollback` can
        # put them back.
        self._saved: list[tuple[OrderedDict[str, _ArticleMemory], _ArticleMemory | None, _ArticleMemory]] | None = None

    def mark(self) -> tuple[int, int]:
        """Open a transaction (or continue the open one) over the index and the article memories; returns a mark.
        What chunks link or replay after it can be undone (`rollback`) until `commit`: the extract stage keeps a
        chunk's index operations only once its write succeeded, and later chunks of the batch see the earlier
        ones' in the meantime."""
        if self._saved is None:
            self._saved = []
        return self.index.begin(), len(self._saved)

    def rollback(self, mark: tuple[int, int] = (0, 0)) -> None:
        """Undo what the chunks linked or replayed since the mark taught the index and the article memories."""
        index_mark, memory_mark = mark
        self.index.rollback(index_mark)
        saved = self._saved or []
        while len(saved) > memory_mark:
            order, memory, content = saved.pop()
            self._articles = order
            if memory is not None:  # (in place: the older saved orders hold this very object)
                memory.__dict__.update(content.__dict__)

    def commit(self) -> None:
        """Keep everything linked or replayed since the transaction opened, and close it."""
        self.index.commit()
        self._saved = None

    def _save_memory(self, article_id: str) -> None:
        """Before a chunk changes its article's memory (and the LRU order), in a transaction: what to restore."""
        if self._saved is not None:
            memory = self._articles.get(article_id)
            self._saved.append((OrderedDict(self._articles), memory, _copy(memory or _ArticleMemory())))

    def _memory(self, article_id: str) -> _ArticleMemory:
        """The article's memory, now the most recently used."""
        memory = self._articles.pop(article_id, None) or _ArticleMemory()
        self._articles[article_id] = memory
        while len(self._articles) > self._limit:
            self._articles.popitem(last=False)
        return memory

    def link(self, doc: Doc, article_id: str, as_of: Seen | None = None) -> list[LinkedMention]:
        """`as_of`: the chunk's (publication day, ingestion ms): the index answers as of it, and what this chunk
        teaches the index is remembered as first seen then (and in `journal`)."""
        self._ops = []
        self._save_memory(article_id)
        context = context_words(doc)
        before = _dump(self._articles[article_id]) if article_id in self._articles else ArticleMemory()
        linked = self._link(doc, article_id, context, as_of)
        added = _added(before, _dump(self._articles[article_id]))
        self.journal = LinkJournal(
            article_id=article_id, seen=as_of or ALWAYS, context=sorted(context), ops=self._ops, memory=added
        )
        return linked

    def replay(self, journal: LinkJournal) -> None:
        """Teach the index and the chunk's article memory what linking the chunk taught them: the state a
        restarted stage resumes from (journals replayed in the order they were first made)."""
        seen: Seen = journal.seen
        context = set(journal.context)
        self._save_memory(journal.article_id)
        for op in journal.ops:
            self._apply(op, seen, context)
        _add_to(self._memory(journal.article_id), journal.memory)

    def _apply(self, op: IndexOp, seen: Seen, context: set[str]) -> KnownEntity | bool | None:
        """One index operation, the same whether linking makes it now or a journal replays it: an add returns
        its entity, a merge whether the edge now leads to the target."""
        if op.op == "add":
            return self.index.add(op.entity_id, op.text, op.kind, context=context, seen=seen)
        if op.op == "merge":
            return self.index.merge(op.entity_id, op.text, seen)
        if op.op == "alias":
            self.index.add_alias(op.entity_id, op.text, seen)
        else:
            self.index.vote(op.entity_id, op.text, op.weight, seen)
        return None

    def _do(self, op: IndexOp, seen: Seen, context: set[str]) -> KnownEntity | bool | None:
        self._ops.append(op)
        return self._apply(op, seen, context)

    def _link(self, doc: Doc, article_id: str, context: set[str], as_of: Seen | None) -> list[LinkedMention]:
        memory = self._memory(article_id)

        def known(first_word: str) -> list[KnownName]:
            return [*self.index.names_starting(first_word, as_of), *memory.names.get(first_word, ())]

        mentions = find_mentions(doc, memory.person_tokens | self.index.person_name_parts(as_of), self.rules, known)
        fulls = memory.fulls + [f for f in full_forms([(m.name, m.type) for m in mentions]) if f not in memory.fulls]
        canons = [self._canonical(m, fulls) for m in mentions]
        chunk_types = _chunk_types(mentions, canons) if self.rules.type_vote else {}
        linked = [
            self._link_one(m, c, chunk_types, context, as_of, memory) for m, c in zip(mentions, canons, strict=True)
        ]
        if self.rules.type_vote:
            linked = self._vote(mentions, linked, as_of, memory)
        memory.fulls = fulls
        memory.person_tokens.update(t for f in fulls if f.type == "PERSON" for t in tokens_of(f.name))
        for m in linked:
            for name in {m.name, m.text}:
                words = tuple(tokens_of(name))
                if words:
                    memory.names.setdefault(words[0], set()).add((words, m.type))
        return sorted(linked + self._references(doc, mentions, linked), key=lambda m: m.start)

    def _canonical(self, mention: RawMention, fulls: list[Canonical]) -> Canonical:
        if self.rules.short_form_coref:
            return resolve(mention.name, mention.type, fulls)
        return Canonical(mention.name, mention.type)

    def _link_one(
        self,
        mention: RawMention,
        canon: Canonical,
        chunk_types: dict[str, str],
        context: set[str],
        as_of: Seen | None,
        memory: _ArticleMemory,
    ) -> LinkedMention:
        key = name_key(canon.name)
        kind = chunk_types.get(key, canon.type)
        decision = None if key in memory.linked else self.index.lookup(canon.name, kind, context, as_of)
        if key in memory.linked:
            eid, method = memory.linked[key], "article"
            why = f"{canon.name!r} was linked earlier in the article"
        elif decision:
            eid, method, why = decision.entity_id, decision.method, decision.explanation
        else:
            # A new entity's id hashes its name alone (core/ids.named_entity_id): the same id whatever type this
            # chunk votes, so chunks that could not see each other still make one entity, as a replay would.
            eid, method = named_entity_id(canon.name), "new"
            why = f"no known entity matches {canon.name!r} ({kind}): new entity"
        seen = as_of or ALWAYS
        known = self._do(IndexOp(op="add", entity_id=eid, text=canon.name, kind=kind), seen, context)
        assert isinstance(known, KnownEntity)  # (an add returns its entity)
        memory.linked.setdefault(key, eid)
        merged = self._merge_short_form(mention.name, eid, as_of, context) if canon.explanation else ""
        if mention.name and mention.name != known.name:
            self._do(IndexOp(op="alias", entity_id=eid, text=mention.name), seen, context)
        explanation = "; ".join(p for p in (mention.evidence, canon.explanation, why, merged) if p)
        return LinkedMention(mention.start, mention.end, mention.text, known.type, eid, known.name, method, explanation)

    def _merge_short_form(self, short: str, full_id: str, as_of: Seen | None, context: set[str]) -> str:
        """A short form the article proves to abbreviate a full name ("Leto" → "Jared Leto"): an entity created
        earlier from the short form alone joins the full entity through an alias edge (its id keeps resolving)."""
        if not self.rules.short_form_coref:
            return ""
        key = name_key(short)
        alone = [
            i
            for i in self.index.lookup_ids(key, as_of)
            if i != full_id and name_key(self.index.entities[i].name) == key
        ]
        if len(alone) != 1 or not self._do(
            IndexOp(op="merge", entity_id=alone[0], text=full_id), as_of or ALWAYS, context
        ):
            return ""
        return f"the earlier entity {alone[0]} of {short!r} alone is now an alias of it"

    def _vote(
        self, mentions: list[RawMention], linked: list[LinkedMention], as_of: Seen | None, memory: _ArticleMemory
    ) -> list[LinkedMention]:
        """Each mention votes its type; every mention then carries its entity's majority type as of the chunk."""
        seen = as_of or ALWAYS
        for raw, m in zip(mentions, linked, strict=True):
            if raw.vote:  # (a zero vote changes nothing: not journaled)
                self._do(IndexOp(op="vote", entity_id=m.entity_id, text=raw.type, weight=raw.vote), seen, set())
            article = memory.votes.setdefault(m.entity_id, {})
            article[(raw.type, seen)] = article.get((raw.type, seen), 0) + raw.vote
        out: list[LinkedMention] = []
        for m in linked:
            kind = self.index.entities[m.entity_id].type_as_of(as_of, memory.votes.get(m.entity_id))
            why = m.explanation if kind == m.type else f"{m.explanation}; typed {kind} by the vote of its mentions"
            out.append(replace(m, type=kind, explanation=why))
        return out

    def _references(self, doc: Doc, mentions: list[RawMention], linked: list[LinkedMention]) -> list[LinkedMention]:
        if not (self.rules.pronoun_coref or self.rules.description_coref):
            return []
        sentence_of = {t.i: n for n, sent in enumerate(doc.sents) for t in sent}
        antecedents = [
            Antecedent(
                raw.token_start,
                sentence_of[raw.token_start],
                m.entity_id,
                m.name,
                m.type,
                gender_of(tokens_of(m.name)) if m.type == "PERSON" else "",
            )
            for raw, m in zip(mentions, linked, strict=True)
        ]
        taken = {i for raw in mentions for i in range(raw.token_start, raw.token_end)}
        references: list[Reference] = []
        if self.rules.pronoun_coref:
            references += resolve_pronouns(doc, antecedents, taken)
        if self.rules.description_coref:
            references += resolve_descriptions(doc, antecedents, taken, DESCRIPTION_NOUNS)
        return [
            LinkedMention(
                r.start,
                r.end,
                r.text,
                r.antecedent.type,
                r.antecedent.entity_id,
                r.antecedent.name,
                r.method,
                r.explanation,
            )
            for r in references
        ]

    def entities(self, mentions: list[LinkedMention]) -> list[Entity]:
        """The entity records of the chunk just linked, each as of that chunk (`journal.seen`; core/records.Entity):
        its aliases are the spellings this chunk gave the entity (its add and alias operations) and the KB's, never
        an alias another chunk taught the index; its name is this chunk's own spelling of the entity's name when it
        gave one (a KB entity: the KB's), so the graph can keep the earliest-visible record's (issue #29)."""
        journal = self.journal
        seen = journal.seen if journal is not None and journal.seen != ALWAYS else None
        shown: dict[str, list[str]] = {}
        for op in journal.ops if journal is not None else []:
            if op.op in ("add", "alias"):
                shown.setdefault(op.entity_id, []).append(op.text)
        out: dict[str, Entity] = {}
        for m in mentions:
            known = self.index.entities[m.entity_id]
            given: dict[str, Seen] = {alias: ALWAYS for alias, first in known.aliases.items() if first == ALWAYS}
            spellings = shown.get(m.entity_id, [])
            own = [s for s in spellings if normalise_text(s) == normalise_text(known.name)]
            out[m.entity_id] = Entity(
                id=known.id,
                name=own[0] if own and not known.from_kb else known.name,
                type=m.type,  # as of the chunk (the type vote), not the type it was created with
                aliases=sorted({*spellings, *given}),
                alias_seen=given,
                description=known.description,
                seen=seen,
                spelled=known.from_kb or bool(own),
            )  # keys
        return list(out.values())


def _chunk_types(mentions: list[RawMention], canons: list[Canonical]) -> dict[str, str]:
    """Canonical name key → the type the chunk's mentions of it vote for (weighted; ties: the first mention's)."""
    tally: dict[str, dict[str, int]] = {}
    for raw, canon in zip(mentions, canons, strict=True):
        votes = tally.setdefault(name_key(canon.name), {})
        kind = raw.type if raw.vote else canon.type
        votes[kind] = votes.get(kind, 0) + raw.vote
    return {key: max(votes, key=lambda k: (votes[k], -list(votes).index(k))) for key, votes in tally.items()}


def _dump(memory: _ArticleMemory) -> ArticleMemory:
    return ArticleMemory(
        fulls=[(f.name, f.type, f.explanation) for f in memory.fulls],
        person_tokens=sorted(memory.person_tokens),
        linked=dict(memory.linked),
        names=sorted((list(words), kind) for known in memory.names.values() for words, kind in known),
        votes=sorted(
            (eid, kind, seen[0], seen[1], weight)
            for eid, votes in memory.votes.items()
            for (kind, seen), weight in votes.items()
        ),
    )


def _copy(memory: _ArticleMemory) -> _ArticleMemory:
    return _ArticleMemory(
        fulls=list(memory.fulls),
        person_tokens=set(memory.person_tokens),
        linked=dict(memory.linked),
        names={word: set(known) for word, known in memory.names.items()},
        votes={eid: dict(votes) for eid, votes in memory.votes.items()},
    )


def _added(before: ArticleMemory, after: ArticleMemory) -> ArticleMemory:
    """What a chunk added to its article's memory (linking only ever adds to it: names, votes, short forms)."""
    known_votes = {(eid, kind, day, ms): weight for eid, kind, day, ms, weight in before.votes}
    return ArticleMemory(
        fulls=after.fulls[len(before.fulls) :],  # appended in order
        person_tokens=sorted(set(after.person_tokens) - set(before.person_tokens)),
        linked={key: eid for key, eid in after.linked.items() if key not in before.linked},
        names=[name for name in after.names if name not in before.names],
        votes=[
            (eid, kind, day, ms, weight - known_votes.get((eid, kind, day, ms), 0))
            for eid, kind, day, ms, weight in after.votes
            if weight != known_votes.get((eid, kind, day, ms), 0)
        ],
    )


def _add_to(memory: _ArticleMemory, added: ArticleMemory) -> None:
    memory.fulls += [Canonical(name, kind, why) for name, kind, why in added.fulls]
    memory.person_tokens.update(added.person_tokens)
    for key, eid in added.linked.items():
        memory.linked.setdefault(key, eid)
    for words, kind in added.names:
        memory.names.setdefault(words[0], set()).add((tuple(words), kind))
    for eid, kind, day, ms, weight in added.votes:
        votes = memory.votes.setdefault(eid, {})
        votes[(kind, (day, ms))] = votes.get((kind, (day, ms)), 0) + weight
