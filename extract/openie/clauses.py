"""M0's subject-centric facts: one compact clause per sentence about a linked entity, so the story's own words
("laid off 2,400 workers", "launched a campaign against meth") reach a fact even when no second entity is in the
sentence (the entity-to-entity paths of extract/openie/offline.py never hold them). The offline analogue of
NEON's subject-centric M1.

- Subject clause: the entity is the (passive) subject of a verb (or conjoined with one): the entity's name, the
  verb with its auxiliaries, negation and particles, and its arguments (objects, attributes, complements,
  prepositional objects, a reported clause), each trimmed to its head word and the words that qualify it.
- Salient mention: the entity is named in a sentence whose main-clause subject is no entity ("Layoffs at WeWork
  hit 2,400 staff"): that main clause, rendered the same way, with the entity's canonical name for its mention,
  or after "<name> <what the sentence says it is>:" when the trimmed clause leaves the mention out. What the
  sentence says the mention is stays in either way: the noun the mention names ("Gannett-Gatehouse merger") and
  its appositive ("a man convicted of threatening my life").
- An attribution ("according to a report in X") is no argument: it says who reported, not what happened.
- The acting party: an organisation in a prepositional modifier of a common-noun subject ("Officers from X
  arrested …") is the clause's subject, its fact keeping the words it acts through ("Officers from X …").
- Each verb conjoined with the subject's verb ("stopped a van … and later arrested the driver after finding
  heroin") is a clause of its own, with the same subject: the first verb's arguments never held the second's.
- Reported speech: the clause a speech verb reports ("…, said Capt. Y") is a main clause of its own for the
  entities in it, and the speaker's fact reads "<speaker> said <the reported clause>" in that order.

A sentence without a verb gives nothing; a clause that is only its verb gives nothing; texts are deduplicated and
capped per chunk (subject clauses first, in sentence order) so a long chunk cannot flood the graph."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from extract.entities.linker import LinkedMention
from extract.openie.offline import SUBJECT_DEPS, VERB_KEEP_DEPS, acting, mention_root, mention_tokens

MAX_CLAUSES_PER_CHUNK = 8
# The rules that make M0 facts (`Interaction.rule`): "pair" (entity-to-entity path, offline.py), "subject" (the
# entity is the verb's subject), "acting" (an organisation acting through a common-noun subject: "Officers from X"),
# "salient" (the entity named inside a main clause whose subject is no entity), "salient-label" (the same, the
# entity outside the kept clause: "X <what it is>: <clause>").
RULES = ("pair", "subject", "acting", "salient", "salient-label")
MAX_WORDS = 16
ARGUMENT_DEPS = {"dobj", "attr", "acomp", "oprd", "dative", "agent", "prep", "xcomp", "ccomp", "advcl", "npadvmod"}
NOUN_QUALIFIER_DEPS = {"compound", "amod", "nmod", "poss"}  # qualifiers qualified in turn ("native advertising")
QUALIFIER_DEPS = {"compound", "amod", "nummod", "poss", "case", "neg", "quantmod", "nmod", "prt", "aux", "auxpass"}
# A noun's clausal modifier ("acl") is what the noun is about: "an effort to address the meth crisis", "a man
# convicted of threatening her" (without it the fact ends at "effort" / "man").
NESTED_DEPS = {
    "prep",
    "pobj",
    "dobj",
    "attr",
    "acomp",
    "xcomp",
    "nsubj",
    "nsubjpass",
    "agent",
    "pcomp",
    "conj",
    "cc",
    "acl",
    "advcl",
}
ATTRIBUTIONS = {"according"}  # "according to a report in X": who said it, not what happened (and it ate the words)
MODIFIER_DEPS = {"compound", "poss", "nmod", "amod"}  # a mention naming a noun: "the Gannett-Gatehouse merger"
CONTENT_POS = {"NOUN", "PROPN", "NUM", "ADJ", "VERB"}
COORDINATED_POS = {"NOUN", "PROPN", "NUM"}  # a noun's conjuncts are the same argument ("president and CEO")
LEADING_DEPS = {"advcl", "prep", "npadvmod"}  # a verb's modifiers that may lead the sentence, before its subject
MAX_DEPTH = 3  # how deep an argument's own arguments are kept ("a campaign against meth in South Dakota")
# Verbs that report a clause: the reported clause is the story, the speaker its source (no lemmatizer: word forms).
SPEECH_VERBS = {"say", "says", "said", "tell", "tells", "told", "add", "adds", "added", "state", "states", "stated"}
SPEECH_VERBS |= {"explain", "explains", "explained", "note", "notes", "noted", "write", "writes", "wrote"}


@dataclass(frozen=True)
class Clause:
    subject: LinkedMention
    text: str
    sentence: int
    rule: str = "subject"  # which rule made it (RULES): the fact-precision evaluation reports each one


def _phrase(token: Token, depth: int) -> set[int]:
    """The argument's head word with the words that qualify it and, `depth` levels down, its own arguments. A
    preposition and its object are one level ("about game day"), as is a verb chain ("want to help you enjoy")."""
    keep = _qualified(token)
    for child in token.children:
        if child.dep_ in ("pobj", "pcomp") and (token.pos_ == "ADP" or token.dep_ == "prep"):
            keep |= _phrase(child, depth)  # a preposition without its object says nothing
        elif child.dep_ == "xcomp" and child.pos_ in ("VERB", "AUX"):
            keep |= _phrase(child, depth)  # "wants to help you enjoy X": X no deeper than in "enjoys X"
        elif child.dep_ in ("conj", "cc") and token.pos_ in COORDINATED_POS:
            keep |= _phrase(child, depth)  # "president and CEO": one argument, a sibling is no level deeper
        elif depth > 0 and (child.dep_ in NESTED_DEPS or (child.dep_ == "ccomp" and depth > 1)):
            keep |= _phrase(child, depth - 1)
    return keep


def _qualified(token: Token) -> set[int]:
    """A word with the words that qualify it, and theirs: "native" of "native advertising platform" qualifies
    "advertising", which qualifies "platform"."""
    keep = {token.i}
    for child in token.children:
        if child.dep_ in QUALIFIER_DEPS:
            keep |= _qualified(child) if child.dep_ in NOUN_QUALIFIER_DEPS else {child.i}  # "Karl" + "'s"
    return keep


def _clause_tokens(verb: Token, skip: set[int]) -> set[int]:
    keep = {verb.i} | {c.i for c in verb.children if c.dep_ in VERB_KEEP_DEPS}
    for child in verb.children:
        if child.dep_ in ARGUMENT_DEPS and child.i not in skip and child.lower_ not in ATTRIBUTIONS:
            keep |= _phrase(child, MAX_DEPTH)
    return keep


def _mention_phrase(mention: list[Token]) -> set[int]:
    """What the sentence says the mention is: the noun it names ("the Gannett-Gatehouse merger"), its appositive
    ("Patrick W. Carlineo, a man convicted of threatening my life") and what it is listed with ("App Store gift
    cards and another HomePod"), kept in a salient clause about the mention."""
    keep = {t.i for t in mention}
    root = mention_root(mention)
    if root.dep_ in MODIFIER_DEPS and root.head.pos_ in ("NOUN", "PROPN"):
        keep.add(root.head.i)
    for child in root.children:
        if child.dep_ == "appos":
            keep |= _phrase(child, MAX_DEPTH)
    if root.dep_ == "conj" and root.head.pos_ in COORDINATED_POS:  # "gift cards and another HomePod"
        keep |= _qualified(root.head) | {c.i for c in root.head.children if c.dep_ == "cc"}
    return keep


def _conjoined_verbs(verb: Token) -> list[Token]:
    """Verbs conjoined with `verb` that share its subject (none of their own): "stopped … and later arrested …"."""
    return [
        c
        for c in verb.children
        if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX") and not any(g.dep_ in SUBJECT_DEPS for g in c.children)
    ]


def _reported(verb: Token) -> list[Token]:
    """The clauses a speech verb reports, each with a subject of its own ("Officers … arrested …, said Y")."""
    if verb.lower_ not in SPEECH_VERBS:
        return []
    return [c for c in verb.children if c.dep_ == "ccomp" and any(g.dep_ in SUBJECT_DEPS for g in c.children)]


def _subtree(token: Token) -> set[int]:
    return {t.i for t in token.subtree}


def _render(
    doc: Doc,
    keep: set[int],
    mentions: list[LinkedMention],
    tokens: dict[int, list[Token]],
    limit: int = MAX_WORDS,
    fringe: set[int] | None = None,
) -> str:
    """The kept words in sentence order, each mention's words replaced by its canonical name (once); a hyphenated
    word stays whole ("all-time high", "front-runner": the parse keeps only "time", "runner"). Past `limit` words
    the `fringe` goes first (a modifier leading the sentence: "Armed with some ice packs …, X stayed cold while
    being easy … to carry on a mountain hike"), since the cut falls at the end, where the verb's own objects are."""
    words = _words(doc, keep, mentions, tokens)
    if len(words) > limit and fringe:
        mention_ids = {t.i for m in mentions for t in tokens[id(m)]}
        words = _words(doc, keep - (fringe - mention_ids), mentions, tokens)
    return " ".join(words[:limit])


def _words(doc: Doc, keep: set[int], mentions: list[LinkedMention], tokens: dict[int, list[Token]]) -> list[str]:
    keep = _whole_hyphenated(doc, keep)
    name_at: dict[int, tuple[int, str]] = {}
    possessive: dict[int, bool] = {}
    for m in mentions:
        ids = [t.i for t in tokens[id(m)]]
        for i in ids:
            name_at[i] = (ids[0], m.name)
        if ids:  # "Karl Lagerfeld's estate" keeps its "'s" (the mention's span holds it)
            possessive[ids[0]] = m.text.rstrip().endswith(("'s", "’s")) and not m.name.endswith(("'s", "’s"))
    words: list[str] = []
    placed: set[int] = set()
    for i in sorted(keep)[: MAX_WORDS * 2]:
        if i in name_at:
            first, name = name_at[i]
            if first not in placed:
                placed.add(first)
                words.append(name + ("'s" if possessive[first] else ""))
            continue
        token = doc[i]
        glued = i > 0 and i - 1 in keep and _hyphenated(doc, i - 1, i)
        if token.is_punct and token.text not in ("%", "$") and not glued and not _hyphenated(doc, i, i + 1):
            continue
        if words and (glued or token.text in ("'s", "’s", "'", "%")):
            words[-1] += token.text
        else:
            words.append(token.text)
    return words


def _leading(verb: Token, keep: set[int]) -> set[int]:
    """The kept words of the verb's modifiers that come before it ("Armed with …, X stayed …")."""
    return {i for c in verb.children if c.dep_ in LEADING_DEPS and c.i < verb.i for i in _subtree(c)} & keep


def _hyphenated(doc: Doc, left: int, right: int) -> bool:
    """Two adjacent tokens of one hyphenated word: no space between them, one of them a hyphen."""
    if left < 0 or right >= len(doc) or doc[left].whitespace_:
        return False
    return doc[left].tag_ == "HYPH" or doc[right].tag_ == "HYPH"


def _whole_hyphenated(doc: Doc, keep: set[int]) -> set[int]:
    whole = set(keep)
    for i in keep:
        j = i
        while _hyphenated(doc, j - 1, j):
            j -= 1
            whole.add(j)
        j = i
        while _hyphenated(doc, j, j + 1):
            j += 1
            whole.add(j)
    return whole


def _has_content(doc: Doc, keep: set[int], verb: Token, mention_ids: set[int]) -> bool:
    return any(doc[i].pos_ in CONTENT_POS for i in keep - {verb.i} - mention_ids)


def _subject_clauses(
    doc: Doc, mentions: list[LinkedMention], tokens: dict[int, list[Token]]
) -> list[tuple[int, Clause]]:
    """Per subject, the clause of its verb, then one per verb conjoined with it."""
    out: list[tuple[int, Clause]] = []
    for subject in mentions:
        if not tokens[id(subject)]:
            continue
        act = acting(subject, tokens[id(subject)])
        if act is None:
            continue
        own = {t.i for t in tokens[id(subject)]}
        for verb in [act.verb, *_conjoined_verbs(act.verb)]:
            keep = _clause_tokens(verb, own)
            if not _has_content(doc, keep, verb, own):
                continue  # "Doja Cat smiled": only the verb
            text = _subject_text(doc, subject, act.lead, verb, keep - own, mentions, tokens)
            out.append((verb.i, Clause(subject, text, -1, "acting" if act.lead else "subject")))
    return out


def _subject_text(
    doc: Doc,
    subject: LinkedMention,
    lead: tuple[Token, ...],
    verb: Token,
    keep: set[int],
    mentions: list[LinkedMention],
    tokens: dict[int, list[Token]],
) -> str:
    """The subject's name (after the words it acts through: "Officers from X"), then the clause; a clause the verb
    reports before it ("…, said Y") comes after the verb, so the fact reads "Y said …"."""
    others = [m for m in mentions if m is not subject]
    head = " ".join([*(t.text for t in lead), subject.name])
    before = set().union(*(_subtree(c) for c in _reported(verb) if c.i < verb.i)) & keep
    fringe = _leading(verb, keep)
    if not before:
        return f"{head} {_render(doc, keep, others, tokens, fringe=fringe)}"
    said = _render(doc, keep - before, others, tokens, fringe=fringe)
    reported = _render(doc, before, others, tokens, MAX_WORDS - len(said.split()))
    return f"{head} {said} {reported}".strip()


def _salient_clauses(
    doc: Doc, mentions: list[LinkedMention], tokens: dict[int, list[Token]], subjects: set[int]
) -> list[tuple[int, Clause]]:
    """Mentions in a main clause whose subject is no entity: that clause, about each of them. The main clauses of a
    sentence are its root's and those its root reports ("Officers … arrested …, said Y"); each mention belongs to
    the innermost one. A verb conjoined with a main clause's verb gives a clause of its own, about the mentions in
    it."""
    out: list[tuple[int, Clause]] = []
    for sent in doc.sents:
        root = sent.root
        if root.pos_ not in ("VERB", "AUX"):
            continue  # no verb: a caption, a dateline, a list
        in_sentence = [m for m in mentions if tokens[id(m)] and sent.start <= tokens[id(m)][0].i < sent.end]
        reported = _reported(root)
        inner = set().union(*(_subtree(c) for c in reported))
        units = [(root, [m for m in in_sentence if tokens[id(m)][0].i not in inner])]
        units += [(c, [m for m in in_sentence if tokens[id(m)][0].i in _subtree(c)]) for c in reported]
        for head, here in units:
            if here and not any(tokens[id(m)][0].i in subjects for m in here):
                out += _main_clause(doc, head, here, tokens)
    return out


def _main_clause(
    doc: Doc, head: Token, here: list[LinkedMention], tokens: dict[int, list[Token]]
) -> list[tuple[int, Clause]]:
    subject = {i for c in head.children if c.dep_ in SUBJECT_DEPS for i in _phrase(c, 2)}
    out: list[tuple[int, Clause]] = []
    for n, verb in enumerate([head, *_conjoined_verbs(head)]):
        keep = _clause_tokens(verb, set()) | subject
        mention_ids = {t.i for m in here for t in tokens[id(m)]}
        if not _has_content(doc, keep, verb, mention_ids):
            continue
        fringe = _leading(verb, keep)
        seen: set[str] = set()
        for m in here:
            inside = any(t.i in keep for t in tokens[id(m)])
            if m.entity_id in seen or (n > 0 and not inside):
                continue  # a conjoined verb's clause is about the mentions it holds
            seen.add(m.entity_id)
            own = _mention_phrase(tokens[id(m)])
            if inside:
                body = _render(doc, keep | own, here, tokens, fringe=fringe)
            else:
                body = f"{_render(doc, own, here, tokens)}: {_render(doc, keep, here, tokens, fringe=fringe)}"
            out.append((verb.i, Clause(m, body, -1, "salient" if inside else "salient-label")))
    return out


def extract_clauses(
    doc: Doc, mentions: list[LinkedMention], subjects: set[str] | None = None, known: set[str] | None = None
) -> list[Clause]:
    """Subject clauses, then salient-mention clauses, deduplicated (also against `known` texts, the chunk's
    entity-to-entity facts) and capped at MAX_CLAUSES_PER_CHUNK. `subjects`: entity ids allowed as subjects."""
    tokens = {id(m): mention_tokens(doc, m) for m in mentions}
    sentence_of = {t.i: n for n, sent in enumerate(doc.sents) for t in sent}
    subject_roots = {tokens[id(m)][0].i for m in mentions if tokens[id(m)] and acting(m, tokens[id(m)]) is not None}
    found = _subject_clauses(doc, mentions, tokens) + _salient_clauses(doc, mentions, tokens, subject_roots)
    seen = {t.lower() for t in known or set()}
    clauses: list[Clause] = []
    for verb_i, clause in found:
        if subjects is not None and clause.subject.entity_id not in subjects:
            continue
        key = clause.text.lower()
        if key in seen:
            continue
        seen.add(key)
        clauses.append(Clause(clause.subject, clause.text, sentence_of[verb_i], clause.rule))
        if len(clauses) == MAX_CLAUSES_PER_CHUNK:
            break
    return clauses
