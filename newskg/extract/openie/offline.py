"""M0, the offline extractor (no LLM), entity-to-entity facts: a subject clause (clauses.py) that names a second
entity on its verb's own path ("Doja Cat thanked Karl Lagerfeld's estate in a statement") is a fact with that
entity as its object. The object's path up the parse must reach the subject's verb within a few steps, through no
clause with a subject of its own ("… and she did not meet Leto") and through no other entity (that one has its own
fact)."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from newskg.extract.entities.linker import LinkedMention
from newskg.extract.openie.clauses import subject_clauses
from newskg.extract.openie.parse import mention_root, mention_tokens
from newskg.extract.openie.spans import SUBJECT_DEPS

PATH_DEPS = {
    "dobj",
    "pobj",
    "prep",
    "attr",
    "dative",
    "agent",
    "xcomp",
    "acomp",
    "oprd",
    "poss",
    "case",
    "conj",
    "compound",
    "appos",
    "npadvmod",
    "advcl",
    "ccomp",
    "pcomp",
    "nmod",
    "amod",
}
MAX_PATH = 4


@dataclass(frozen=True)
class Relation:
    subject: LinkedMention
    object: LinkedMention
    text: str
    sentence: int
    rule: str = "pair"
    doubts: frozenset[str] = frozenset()  # its subject clause's (clauses.Clause.doubts)
    verb: int = -1  # its subject clause's verb (a token index of the doc)


def _path_to(verb: Token, root: Token) -> list[Token] | None:
    """Tokens strictly between the object and the verb, climbing heads; None if too far or not through the verb."""
    path: list[Token] = []
    node = root
    for _ in range(MAX_PATH + 1):
        if node.i == verb.i:
            return path
        if node.dep_ not in PATH_DEPS or node.head.i == node.i:
            return None
        if node.pos_ in ("VERB", "AUX") and any(c.dep_ in SUBJECT_DEPS for c in node.children):
            return None  # a clause with its own subject: "… and she did not meet Leto"
        if node.i != root.i:
            path.append(node)
        node = node.head
    return None


def extract_relations(
    doc: Doc, mentions: list[LinkedMention], subjects: set[str] | None = None, strict: bool = False
) -> list[Relation]:
    """`subjects`: entity ids allowed as subjects (None: any linked entity); `strict`: clauses.py's strict rules."""
    tokens = {id(m): mention_tokens(doc, m) for m in mentions}
    sentence_of = {t.i: n for n, sent in enumerate(doc.sents) for t in sent}
    token_ids = {id(m): {t.i for t in tokens[id(m)]} for m in mentions}
    relations: list[Relation] = []
    seen: set[tuple[str, str, str]] = set()
    for clause in subject_clauses(doc, mentions, tokens, strict):
        subject = clause.subject
        if subjects is not None and subject.entity_id not in subjects:
            continue
        verb = doc[clause.verb]
        for obj in mentions:
            if obj.entity_id == subject.entity_id or not tokens[id(obj)] or not token_ids[id(obj)] <= clause.ids:
                continue
            path = _path_to(verb, mention_root(tokens[id(obj)]))
            others = {i for m in mentions if m is not obj and m is not subject for i in token_ids[id(m)]}
            if path is None or {t.i for t in path} & others:
                continue  # through another entity: that one has its own relation
            key = (subject.entity_id, obj.entity_id, clause.text)
            if key not in seen:
                seen.add(key)
                relations.append(
                    Relation(subject, obj, clause.text, sentence_of[verb.i], doubts=clause.doubts, verb=verb.i)
                )
    return relations
