"""Named-entity mentions in a parsed chunk: spaCy's entities of the kept types, widened over a trailing proper
noun the model split off ("Anna" + "Wintour"), plus lone proper nouns that repeat a token of a person named
in full in the same document ("Leto" after "Jared Leto"), which the small model often misses."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Span

from extract.entities.names import CALENDAR_WORDS, clean_name, tokens_of
from extract.entities.rules import EntityRules
from extract.entities.types import LABEL_TO_TYPE


@dataclass(frozen=True)
class RawMention:
    start: int  # character offsets in the chunk text
    end: int
    text: str
    type: str
    token_start: int
    token_end: int

    @property
    def name(self) -> str:
        return clean_name(self.text)


def _widen(span: Span) -> Span:
    doc, end = span.doc, span.end
    while (
        end < len(doc) and doc[end - 1].dep_ == "compound" and doc[end - 1].head.i == end and doc[end].pos_ == "PROPN"
    ):
        end += 1
    return doc[span.start : end]


def _in_name_run(token) -> bool:
    """Part of a longer capitalised name ("the Talaira Mini"): not a lone surname, whatever its last word."""
    doc = token.doc
    neighbours = [doc[i] for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)]
    return any(n.pos_ == "PROPN" and n.text[:1].isupper() and not n.is_sent_start for n in neighbours)


def find_mentions(
    doc: Doc, person_tokens: set[str] | None = None, rules: EntityRules = EntityRules()
) -> list[RawMention]:
    """`person_tokens`: name tokens of people already named in full earlier in the same article."""
    mentions: list[RawMention] = []
    taken: set[int] = set()
    for ent in doc.ents:
        kind = LABEL_TO_TYPE.get(ent.label_)
        if not kind:
            continue
        span = _widen(ent) if rules.widen_split_names else ent
        if not clean_name(span.text) or taken & set(range(span.start, span.end)):
            continue
        taken.update(range(span.start, span.end))
        mentions.append(RawMention(span.start_char, span.end_char, span.text, kind, span.start, span.end))
    if not rules.repeat_person_tokens:
        return mentions
    known = set(person_tokens or ())
    known.update(t for m in mentions if m.type == "PERSON" and len(tokens_of(m.name)) > 1 for t in tokens_of(m.name))
    for token in doc:
        if (
            token.i in taken
            or token.pos_ != "PROPN"
            or not token.text[:1].isupper()
            or _in_name_run(token)
            or token.text.lower() in CALENDAR_WORDS
        ):
            continue
        if tokens_of(token.text) and tokens_of(token.text)[0] in known:
            taken.add(token.i)
            mentions.append(
                RawMention(token.idx, token.idx + len(token.text), token.text, "PERSON", token.i, token.i + 1)
            )
    return sorted(mentions, key=lambda m: m.start)
