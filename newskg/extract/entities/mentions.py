"""Named-entity mentions in a parsed chunk: spaCy's entities of the kept types, widened over a trailing proper
noun the model split off ("Anna" + "Wintour"), plus lone proper nouns that repeat a token of a person named
in full in the same document ("Leto" after "Jared Leto"), which the small model often misses.

Beyond the model (each a switch of `EntityRules`): names known as of the chunk wherever they appear, proper-noun
runs coordinated with or appositive to a mention ("Doja Cat and Jared Leto"), and type evidence (first names,
organisation designators, appositive nouns, a later "she" of the same sentence) that outweighs the model's label."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from spacy.tokens import Doc, Span, Token

from newskg.extract.entities.evidence import DESCRIPTION_NOUNS, first_names, org_by_designator, person_by_first_name
from newskg.extract.entities.name_check import doubtful
from newskg.extract.entities.names import CALENDAR_WORDS, TITLES, clean_name, name_key, tokens_of
from newskg.extract.entities.rules import EntityRules
from newskg.extract.entities.types import LABEL_TO_TYPE

# How much a mention's type counts in its entity's type vote: the model's label, a copy of a known entity's type
# (no new evidence), and a rule's evidence (first name, designator, appositive noun, pronoun), which outweighs
# a label the small model often gets wrong.
MODEL_VOTE, COPY_VOTE, EVIDENCE_VOTE = 1, 0, 4
PERSONAL_PRONOUNS = frozenset({"she", "her", "hers", "herself", "he", "him", "his", "himself"})
# A brand-spelt lower-case word ("my6sense") is a known name only from this length: "mp3", "h1", "4g" are not.
MIN_SHAPED_CHARS = 4

KnownName = tuple[tuple[str, ...], str]  # a known name's key words, its entity's type
KnownNames = Callable[[str], Sequence[KnownName]]  # first key word → the known names starting with it


@dataclass(frozen=True)
class RawMention:
    start: int  # character offsets in the chunk text
    end: int
    text: str
    type: str
    token_start: int
    token_end: int
    source: str = "model"  # model | repeat | known | coordinated
    vote: int = MODEL_VOTE
    evidence: str = ""  # why this mention or its type, beyond the model

    @property
    def name(self) -> str:
        return clean_name(self.text)


NAME_PARTICLES = frozenset(
    {"de", "la", "del", "della", "di", "da", "du", "van", "von", "der", "den", "le", "bin", "al"}
)


def _widen(span: Span) -> Span:
    """Over a trailing proper noun the model split off ("Anna" + "Wintour") and over lower-case name particles
    followed by a capitalised proper noun ("Oscar" + "de la Renta"). A split-off word is taken with the rest of the
    run up to the name's head ("the Dayton Police Department" + "Intelligence Led Policing Unit"), or not at all:
    a span cut inside a longer proper-noun run ("… Department Intelligence") is a name no one uses."""
    doc, end = span.doc, span.end
    while end < len(doc) and doc[end - 1].dep_ == "compound" and doc[end - 1].head.i >= end:
        run = doc[end : doc[end - 1].head.i + 1]
        if not all(t.pos_ == "PROPN" and not _title_word(t) for t in run):
            break  # "US" + "President" is no name
        if len(run) > 1 and any(t.ent_type_ for t in run):
            break  # "Lt Col" + "Alexander Vindman": the model's own next name
        end = run.end
    particles = end
    while particles < len(doc) and doc[particles].lower_ in NAME_PARTICLES and doc[particles].text.islower():
        particles += 1
    if particles > end and particles < len(doc) and doc[particles].pos_ == "PROPN" and _capitalised(doc[particles]):
        end = particles + 1
    return doc[span.start : end]


def _title_word(token: Token) -> bool:
    return token.lower_.rstrip(".") in TITLES and token.lower_ != "the"


POSSESSIVES = frozenset({"'s", "’s", "'", "’"})


def _edge_noise(token: Token) -> bool:
    """Never the first or last word of a name: punctuation, a conjunction, a preposition, a lower-case word."""
    lower_case = not token.text[:1].isupper() and not token.text[:1].isdigit()
    return token.is_punct or token.pos_ in {"CCONJ", "ADP", "DET"} or lower_case


def _tidy(span: Span, kind: str) -> list[tuple[int, int]]:
    """The name parts of a model span (token offsets), by `EntityRules.tidy_spans`: see there."""
    doc, start = span.doc, span.start
    end = _before_verb(doc, start, span.end)
    if end - start > 1 and all(_title_word(t) or t.is_punct for t in doc[start:end]):
        return []  # titles alone ("Lt Col")
    possessive = 1 if end - start > 1 and doc[end - 1].lower_ in POSSESSIVES else 0  # kept, as the model gave it
    start, end = _trim_edges(doc, start, end - possessive, kind)
    if start >= end or (end - start == 1 and len(doc[start].text) == 1):
        return []  # nothing left, or a lone letter ("Kristi Noem (R)")
    end += possessive
    if kind == "PERSON" and end - start >= 3:  # "Australian Timothy Weeks", "Browns DL Sheldon Richardson"
        start = _from_first_name(doc, start, end)
    return _split_at_possessive(doc, start, end)


def _before_verb(doc: Doc, start: int, end: int) -> int:
    """A verb inside ("Garrett hit Rudolph") ends the name before it."""
    for i in range(start + 1, end - 1):
        if doc[i].pos_ in {"VERB", "AUX"} and doc[i].text.islower():
            return i
    return end


def _trim_edges(doc: Doc, start: int, end: int, kind: str) -> tuple[int, int]:
    """Without the noise at either edge (`_edge_noise`, a stray possessive) and the titles before the name."""
    while start < end and (_edge_noise(doc[start]) or doc[start].lower_ in POSSESSIVES):
        start += 1
    while start + 1 < end and _title_word(doc[start]):
        start += 1
    # A person's name may end in a title word ("Kevin King"); a place or an organisation does not ("… Gov.").
    while end > start and (_edge_noise(doc[end - 1]) or (kind != "PERSON" and _title_word(doc[end - 1]))):
        end -= 1
    return start, end


def _from_first_name(doc: Doc, start: int, end: int) -> int:
    """A person's name starts at its first name when words stand before it ("Australian Timothy Weeks")."""
    names = first_names()
    firsts = [i for i in range(start, end - 1) if doc[i].lower_ in names and _capitalised(doc[i])]
    return firsts[0] if firsts and firsts[0] > start else start


def _split_at_possessive(doc: Doc, start: int, end: int) -> list[tuple[int, int]]:
    """Two names when a possessive joins them ("Jeff Bezos's Blue Origin")."""
    for i in range(start + 1, end - 2):
        if doc[i].lower_ in POSSESSIVES and all(_capitalised(t) for t in doc[i + 1 : end]):
            return [(start, i), (i + 1, end)]
    return [(start, end)]


def _in_name_run(token: Token) -> bool:
    """Part of a longer capitalised name ("the Talaira Mini"): not a lone surname, whatever its last word."""
    doc = token.doc
    neighbours = [doc[i] for i in (token.i - 1, token.i + 1) if 0 <= i < len(doc)]
    return any(n.pos_ == "PROPN" and n.text[:1].isupper() and not n.is_sent_start for n in neighbours)


def _token_key(token: Token) -> str:
    return token.lower_ if token.is_alpha else name_key(token.text)


def _capitalised(token: Token) -> bool:
    return token.text[:1].isupper()


def _name_shaped(token: Token) -> bool:
    """A lower-case-first word spelt like a brand, not a dictionary word: a digit or a capital inside it
    ("my6sense", "iPhone", "eBay"). Such a word names what it named before wherever it stands, the start of a
    sentence included, and whatever part of speech the model gives it ("my6sense offers …" is its NOUN)."""
    text = token.text
    return (
        len(text) >= MIN_SHAPED_CHARS
        and text[:1].islower()
        and any(c.isalpha() for c in text)
        and any(c.isdigit() or c.isupper() for c in text[1:])
    )


def _with_possessive(doc: Doc, end: int) -> int:
    return end + 1 if end < len(doc) and doc[end].lower_ in {"'s", "’s"} else end


def _mention(doc: Doc, start: int, end: int, kind: str, source: str, vote: int, evidence: str) -> RawMention:
    span = doc[start:end]
    return RawMention(span.start_char, span.end_char, span.text, kind, start, end, source, vote, evidence)


def _model_mentions(doc: Doc, rules: EntityRules, taken: set[int]) -> list[RawMention]:
    mentions: list[RawMention] = []
    for ent in doc.ents:
        kind = LABEL_TO_TYPE.get(ent.label_)
        if not kind:
            continue
        span = _widen(ent) if rules.widen_split_names else ent
        parts = _tidy(span, kind) if rules.tidy_spans else [(span.start, span.end)]
        for start, end in parts:
            part = doc[start:end]
            if not clean_name(part.text) or taken & set(range(start, end)):
                continue
            taken.update(range(start, end))
            mentions.append(RawMention(part.start_char, part.end_char, part.text, kind, start, end))
    return mentions


def _repeated_person_tokens(doc: Doc, known: set[str], taken: set[int]) -> list[RawMention]:
    found: list[RawMention] = []
    for token in doc:
        if (
            token.i in taken
            or token.pos_ != "PROPN"
            or not _capitalised(token)
            or _in_name_run(token)
            or token.text.lower() in CALENDAR_WORDS
        ):
            continue
        if tokens_of(token.text) and tokens_of(token.text)[0] in known:
            taken.add(token.i)
            found.append(RawMention(token.idx, token.idx + len(token.text), token.text, "PERSON", token.i, token.i + 1))
    return found


def _known_names(doc: Doc, found: list[RawMention], known: KnownNames, taken: set[int]) -> list[RawMention]:
    """Known names wherever they appear: the chunk's own model mentions (the model often tags a name once and
    misses it next), and whatever `known` answers (the stream so far, as of the chunk)."""
    local: dict[str, list[KnownName]] = {}
    for m in found:
        words = tuple(tokens_of(m.name))
        if words:
            local.setdefault(words[0], []).append((words, m.type))
    keys = [_token_key(t) for t in doc]
    matches: list[RawMention] = []
    for token in doc:
        i = token.i
        shaped = _name_shaped(token)
        if i in taken or not (_capitalised(token) or shaped) or keys[i] in CALENDAR_WORDS:
            continue
        candidates = sorted({*local.get(keys[i], ()), *known(keys[i])}, key=lambda c: (-len(c[0]), c))
        for words, kind in candidates:
            end = i + len(words)
            if tuple(keys[i:end]) != words or taken & set(range(i, end)):
                continue
            if len(words) == 1 and not shaped and (token.pos_ != "PROPN" or _in_name_run(token)):
                continue  # a lone known word counts only as a proper noun standing on its own (or brand-spelt)
            end = _with_possessive(doc, end)
            taken.update(range(i, end))
            why = f"{doc[i:end].text!r} is a name recognised earlier ({kind})"
            matches.append(_mention(doc, i, end, kind, "known", COPY_VOTE, why))
            break
    return matches


def _plural_names_after_the(doc: Doc, taken: set[int]) -> list[RawMention]:
    """ "the Islanders": one capitalised plural proper noun after "the", no entity of the model's (of any type:
    "the Democrats" is its NORP), not the first word of a longer name."""
    found: list[RawMention] = []
    for token in doc[1:]:
        i = token.i
        following = doc[i + 1] if i + 1 < len(doc) else None
        if (
            i in taken
            or token.ent_type_
            or token.pos_ != "PROPN"
            or not _capitalised(token)
            or not token.text.isalpha()
            or len(token.text) < 4
            or not token.text.endswith("s")
            or token.text.endswith("ss")
            or doc[i - 1].lower_ != "the"
            or (following is not None and following.pos_ == "PROPN" and _capitalised(following))
        ):
            continue
        end = _with_possessive(doc, i + 1)
        taken.update(range(i, end))
        why = f"a plural proper noun after {doc[i - 1].text!r}: a team or a band"
        found.append(_mention(doc, i, end, "ORG", "plural", MODEL_VOTE, why))
    return found


def _name_run(token: Token, taken: set[int]) -> tuple[int, int] | None:
    """The capitalised proper nouns ending at `token` ("Jared" + "Leto"), none already a mention."""
    if token.pos_ != "PROPN" or not _capitalised(token) or token.i in taken or token.lower_ in CALENDAR_WORDS:
        return None
    start = token.i
    doc = token.doc
    while (
        start > 0
        and doc[start - 1].pos_ == "PROPN"
        and doc[start - 1].dep_ in {"compound", "flat"}
        and _capitalised(doc[start - 1])
        and start - 1 not in taken
    ):
        start -= 1
    return start, token.i + 1


def _coordinated_names(doc: Doc, found: list[RawMention], taken: set[int], rules: EntityRules) -> list[RawMention]:
    """Proper-noun runs in a conjunction or apposition with a mention: the model recognised one of the pair."""
    runs: list[RawMention] = []
    for m in found:
        root = doc[m.token_start : m.token_end].root
        partners = [c for c in root.children if c.dep_ in {"conj", "appos"}]
        if root.dep_ in {"conj", "appos"}:
            partners.append(root.head)
        for partner in partners:
            run = _name_run(partner, taken)
            if run is not None and rules.tidy_spans:
                run = next(iter(_tidy(doc[run[0] : run[1]], "PERSON")), None)
            if run is None or not clean_name(doc[run[0] : run[1]].text):
                continue
            words = tokens_of(doc[run[0] : run[1]].text)
            kind = "PERSON" if person_by_first_name(words) else m.type
            end = _with_possessive(doc, run[1])
            taken.update(range(run[0], end))
            why = f"coordinated with {m.name!r}"
            runs.append(_mention(doc, run[0], end, kind, "coordinated", MODEL_VOTE, why))
    return runs


def _appositive_type(span: Span) -> tuple[str, str] | None:
    """The type an appositive or preceding description noun gives ("Choupette, … beloved cat"; "singer X")."""
    root = span.root
    nouns = [c for c in root.children if c.dep_ == "appos" and c.i >= span.end]
    nouns += [c for c in root.children if c.dep_ in {"compound", "appos"} and c.i < span.start]
    if root.dep_ == "appos" and root.head.i < span.start:
        nouns.append(root.head)
    for noun in nouns:
        kind = DESCRIPTION_NOUNS.get(noun.lower_)
        if noun.pos_ == "NOUN" and kind:
            return kind, f"described as a {noun.lower_!r}"
    return None


def _after_the(span: Span) -> bool:
    """One word after "the", not modifying a noun ("the Bruins", not "the Trump administration")."""
    doc = span.doc
    return (
        len(span) == 1
        and span.start > 0
        and doc[span.start - 1].lower_ == "the"
        and span.root.dep_ not in {"compound", "amod", "poss"}
    )


def _subject_of_later_pronoun(span: Span, found: list[RawMention]) -> str | None:
    """A sentence subject followed, before any other mention, by "she"/"his"… of the same sentence."""
    if span.root.dep_ not in {"nsubj", "nsubjpass"}:
        return None
    later = [m.token_start for m in found if m.token_start >= span.end]
    stop = min([span.sent.end, *later])
    for token in span.doc[span.end : stop]:
        if token.lower_ in PERSONAL_PRONOUNS and token.pos_ == "PRON":
            return f"the subject that {token.text!r} later in the sentence refers to"
    return None


def _typed(doc: Doc, m: RawMention, found: list[RawMention], rules: EntityRules) -> RawMention:
    """The mention with the strongest type evidence the enabled rules find (else as it was)."""
    words = tokens_of(m.name)
    span = doc[m.token_start : m.token_end]
    verdicts: list[tuple[str, str]] = []
    if rules.appositive_types and (appositive := _appositive_type(span)):
        verdicts.append(appositive)
    if rules.org_designators and m.type == "PERSON" and org_by_designator(words):
        verdicts.append(("ORG", f"{words[-1]!r} ends an organisation's name"))
    if rules.org_designators and m.type == "PERSON" and _after_the(span):
        verdicts.append(("ORG", f"a lone name after 'the' ({span.text!r}) is no person"))
    spelt_as_name = all(_capitalised(t) or t.lower_ in NAME_PARTICLES or t.lower_ in POSSESSIVES for t in span)
    if rules.first_name_person and spelt_as_name and person_by_first_name(words):
        # also when the model said PERSON: the evidence outweighs the model's labels of its short forms in the
        # type vote ("Donald Trump" once, then "Trump" labelled ORG three times)
        verdicts.append(("PERSON", f"{words[0]!r} is a first name"))
    confusable = m.type in {"ORG", "PLACE", "PRODUCT", "WORK"} and not org_by_designator(words)
    if rules.pronoun_person_evidence and confusable and (why := _subject_of_later_pronoun(span, found)):
        verdicts.append(("PERSON", why))
    if not verdicts:
        return m
    kind, why = verdicts[0]
    evidence = "; ".join(p for p in (m.evidence, f"typed {kind}: {why}") if p)
    return replace(m, type=kind, vote=EVIDENCE_VOTE, evidence=evidence)


def find_mentions(
    doc: Doc,
    person_tokens: set[str] | None = None,
    rules: EntityRules = EntityRules(),
    known: KnownNames | None = None,
) -> list[RawMention]:
    """`person_tokens`: name tokens of people already named in full earlier in the same article; `known`: the
    names recognised earlier in the stream, as of the chunk."""
    taken: set[int] = set()
    mentions = _model_mentions(doc, rules, taken)
    if rules.known_names:
        mentions += _known_names(doc, mentions, known or (lambda _: ()), taken)
    if rules.repeat_person_tokens:
        people = set(person_tokens or ())
        people.update(
            t for m in mentions if m.type == "PERSON" and len(tokens_of(m.name)) > 1 for t in tokens_of(m.name)
        )
        mentions += _repeated_person_tokens(doc, people, taken)
    if rules.plural_names_after_the:
        mentions += _plural_names_after_the(doc, taken)
    if rules.coordinated_names:
        mentions += _coordinated_names(doc, sorted(mentions, key=lambda m: m.start), taken, rules)
    mentions.sort(key=lambda m: m.start)
    typed = [_typed(doc, m, mentions, rules) for m in mentions]
    return [m for m in typed if doubtful(doc, m) is None] if rules.name_check else typed
