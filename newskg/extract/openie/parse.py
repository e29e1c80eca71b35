"""Where a linked mention sits in the parse: its tokens, its root, and the verb it is the acting party of."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from newskg.extract.entities.linker import LinkedMention
from newskg.extract.openie.spans import SUBJECT_DEPS, own_subject_start

# "Officers from X", "Members of X", "Investigators with X", "Staff at X", "a spokesman for X": people acting for
# the organisation X. Only organisations act through their people ("Residents of Denver" are not Denver).
ACTING_PREPS = {"from", "of", "with", "at", "for"}
ACTING_TYPES = {"ORG"}


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


def conjoined_verbs(verb: Token) -> list[Token]:
    """Verbs conjoined with `verb` that share its subject (none of their own, parsed or missed by the parse):
    "stopped … and later arrested …", not "scored … and Linus Ullmark stopped …"."""
    return [
        c
        for c in verb.children
        if c.dep_ == "conj"
        and c.pos_ in ("VERB", "AUX")
        and not any(g.dep_ in SUBJECT_DEPS for g in c.children)
        and own_subject_start(c) is None
    ]
