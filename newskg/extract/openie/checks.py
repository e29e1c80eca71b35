"""When a clause is no fact a reader can trust on its own (each check generalises a class of error read in the
labelled samples of `newskg eval facts`):

- its subject is a name the recogniser cut or ran into its neighbours ("Border Protection" of "Customs and Border
  Protection", "iPhone" of "iPhone 11", "Kroger-owned") or a common noun ("Gunmen");
- it is the writer talking to the reader or about themself ("the first charger I've tested", "you'll get …"),
  outside a quote someone is credited with;
- it ends on a word that needs more ("… by the government's", "… a fight and");
- a speech verb lost what was said ("Habib Essid declared in a televised address")."""

from __future__ import annotations

from collections.abc import Iterable

from spacy.tokens import Doc, Token

from newskg.extract.entities.names import TITLES

WRITER_WORDS = {"i", "me", "my", "mine", "you", "your", "yours", "we", "us", "our", "ours", "i've", "i'm"}
DANGLING_POS = {"DET", "ADP", "CCONJ", "SCONJ", "PART"}
JOINERS = {"and", "&", "of", "for", "de"}
CONTENT_DEPS = ("ccomp", "dobj", "xcomp", "parataxis", "nsubjpass", "csubjpass")  # what a speech verb says


def cut_name(tokens: list[Token]) -> bool:
    """The subject's words are part of a longer name, an adjective made of one, or a common noun."""
    doc = tokens[0].doc
    first, last = tokens[0], tokens[-1]
    after = doc[last.i + 1] if last.i + 1 < len(doc) else None
    before = doc[first.i - 1] if first.i > 0 else None
    if after is not None and not last.whitespace_ and after.text in ("-", "–") and after.i + 1 < len(doc):
        return doc[after.i + 1].text[:1].islower()  # "Kroger-owned"
    if after is not None and last.whitespace_ and (after.like_num or _capitalised_name(after)):
        return True  # "iPhone 11", "Series 3", "Hazard Ascom Holding"
    if before is not None and not before.is_sent_start and _capitalised_name(before) and not _title(before):
        return True  # "e-Tron Sportback" cut to "Sportback" (not "T-Mobile CEO John Legere")
    if before is not None and before.lower_ in JOINERS and before.i > 0 and _capitalised_name(doc[before.i - 1]):
        # "Customs and Border Protection" cut to "Border Protection"; not two people ("Deval Patrick and Michael
        # Bloomberg")
        return not (first.ent_type_ == "PERSON" and doc[before.i - 1].ent_type_ == "PERSON")
    return len(tokens) == 1 and first.tag_ in ("NN", "NNS")  # "Gunmen", "Government"


def _title(token: Token) -> bool:
    """A title or a role before a name ("CEO", "President", "Gov."), not a part of it."""
    return token.text.isupper() or token.lower_.rstrip(".") in TITLES


def _capitalised_name(token: Token) -> bool:
    return token.pos_ == "PROPN" and token.text[:1].isupper() and not token.is_punct


def writer_voice(doc: Doc, ids: Iterable[int]) -> bool:
    return any(doc[i].lower_ in WRITER_WORDS for i in ids)


def dangles(doc: Doc, ids: Iterable[int]) -> bool:
    """The clause's last word needs a word after it: a determiner, a preposition, a conjunction, a possessive."""
    words = [doc[i] for i in sorted(ids) if not doc[i].is_punct]
    if not words:
        return True
    last = words[-1]
    return last.pos_ in DANGLING_POS or last.dep_ in ("poss", "case") or last.lower_ in ("his", "her", "their", "its")


def speech_without_content(verb: Token, ids: Iterable[int], speech_verbs: frozenset[str]) -> bool:
    """A speech verb none of whose words says what was said; a passive one's subject does ("An outbreak of plague
    was confirmed")."""
    if verb.lower_ not in speech_verbs:
        return False
    kept = set(ids)
    return not any(c.i in kept for c in verb.children if c.dep_ in CONTENT_DEPS)
