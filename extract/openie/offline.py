"""M0, the offline extractor (no LLM): dependency paths from a subject entity's verb to another marked entity
of the same sentence, lexicalised as a short interaction sentence ("Doja Cat dressed as Choupette").

A subject is an entity that is the (passive) subject of a verb, or conjoined with one, or an organisation named in
a prepositional modifier of a common-noun subject ("Officers from X arrested Y": X is the acting party, and the
fact keeps "Officers from"); an object is another entity whose path up the parse reaches that verb within a few
steps. The sentence keeps the verb with its auxiliaries, negation and particles, and the words on the path, in
their original order."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from extract.entities.linker import LinkedMention

SUBJECT_DEPS = {"nsubj", "nsubjpass"}
VERB_KEEP_DEPS = {"aux", "auxpass", "neg", "prt"}
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
# "Officers from X", "Members of X", "Investigators with X", "Staff at X", "a spokesman for X": people acting for
# the organisation X. Only organisations act through their people ("Residents of Denver" are not Denver).
ACTING_PREPS = {"from", "of", "with", "at", "for"}
ACTING_TYPES = {"ORG"}


@dataclass(frozen=True)
class Relation:
    subject: LinkedMention
    object: LinkedMention
    text: str
    sentence: int
    rule: str = "pair"


def mention_tokens(doc: Doc, mention: LinkedMention) -> list[Token]:
    span = doc.char_span(mention.start, mention.end, alignment_mode="expand")
    return list(span) if span is not None else []


def mention_root(tokens: list[Token]) -> Token:
    inside = {t.i for t in tokens}
    return next(t for t in tokens if t.head.i not in inside or t.head.i == t.i)


def subject_verb(root: Token) -> Token | None:
    node = root
    while node.dep_ == "conj" and node.head.i != node.i:  # "Doja Cat and Jared Leto arrived"
        node = node.head
    if node.dep_ in SUBJECT_DEPS and node.head.pos_ in ("VERB", "AUX"):
        return node.head
    return None


@dataclass(frozen=True)
class Acting:
    """The verb an entity is the acting party of, and the words it acts through ("Officers from"), if any."""

    verb: Token
    lead: tuple[Token, ...] = ()

    @property
    def lead_text(self) -> str:
        return " ".join(t.text for t in self.lead)


def acting(mention: LinkedMention, tokens: list[Token]) -> Acting | None:
    """The (passive) subject's verb, or the verb of the common-noun subject an organisation is a prepositional
    modifier of ("Officers from X arrested"): the organisation acted through the people the subject names."""
    root = mention_root(tokens)
    verb = subject_verb(root)
    if verb is not None:
        return Acting(verb)
    if mention.type not in ACTING_TYPES or root.dep_ != "pobj" or root.head.dep_ != "prep":
        return None
    prep = root.head
    noun = prep.head
    if prep.lower_ not in ACTING_PREPS or noun.pos_ != "NOUN":
        return None
    verb = subject_verb(noun)
    return Acting(verb, (noun, prep)) if verb is not None else None


def _path_to(verb: Token, root: Token) -> list[Token] | None:
    """Tokens strictly between the object and the verb, climbing heads; None if too far or not through the verb."""
    path, node = [], root
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


def _render(
    doc: Doc, act: Acting, path: list[Token], subject: LinkedMention, obj: LinkedMention, obj_tokens: list[Token]
) -> str:
    verb = act.verb
    verbs = [verb, *(t for t in path if t.pos_ in ("VERB", "AUX"))]  # "tried to buy": keep each verb's "to"
    keep = {c.i for v in verbs for c in v.children if c.dep_ in VERB_KEEP_DEPS} | {verb.i} | {t.i for t in path}
    keep |= {t.i for t in obj_tokens[-1].children if t.dep_ == "case"}  # "Karl's estate"
    obj_ids = {t.i for t in obj_tokens}
    words, placed = [], False
    for i in sorted(keep | obj_ids):
        if i in obj_ids:
            if not placed:
                possessive = obj.text.rstrip().endswith(("'s", "’s")) and bool(path)
                words.append(obj.name + ("'s" if possessive else ""))
                placed = True
            continue
        token = doc[i]
        if words and token.text in ("'s", "’s", "'"):
            words[-1] += token.text
        else:
            words.append(token.text)
    return f"{act.lead_text} {subject.name} {' '.join(words)}".strip()


def _own_verb(act: Acting, path: list[Token]) -> tuple[Acting, list[Token]]:
    """A path through a verb conjoined with the subject's ("stopped a van and later arrested Y") is that verb's:
    "X arrested Y", not "X stopped arrested Y"."""
    if path and path[-1].dep_ == "conj" and path[-1].pos_ in ("VERB", "AUX") and path[-1].head.i == act.verb.i:
        return Acting(path[-1], act.lead), path[:-1]
    return act, path


def extract_relations(doc: Doc, mentions: list[LinkedMention], subjects: set[str] | None = None) -> list[Relation]:
    """`subjects`: entity ids allowed as subjects (None: any linked entity)."""
    tokens = {id(m): mention_tokens(doc, m) for m in mentions}
    sentence_of = {t.i: n for n, sent in enumerate(doc.sents) for t in sent}
    relations: list[Relation] = []
    seen: set[tuple[str, str, str]] = set()
    token_ids = {id(m): {t.i for t in tokens[id(m)]} for m in mentions}

    def other_tokens(a: LinkedMention, b: LinkedMention) -> set[int]:
        return {i for m in mentions if m is not b for i in token_ids[id(m)]}

    for subject in mentions:
        if (subjects is not None and subject.entity_id not in subjects) or not tokens[id(subject)]:
            continue
        act = acting(subject, tokens[id(subject)])
        if act is None:
            continue
        verb = act.verb
        for obj in mentions:
            obj_tokens = tokens[id(obj)]
            if obj.entity_id == subject.entity_id or not obj_tokens:
                continue
            if sentence_of[obj_tokens[0].i] != sentence_of[verb.i]:
                continue
            path = _path_to(verb, mention_root(obj_tokens))
            if path is None or {t.i for t in path} & other_tokens(subject, obj):
                continue  # through another entity: that one has its own relation
            text = _render(doc, *_own_verb(act, path), subject, obj, obj_tokens)
            key = (subject.entity_id, obj.entity_id, text)
            if key not in seen:
                seen.add(key)
                relations.append(Relation(subject, obj, text, sentence_of[verb.i]))
    return relations
