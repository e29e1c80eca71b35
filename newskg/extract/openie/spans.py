"""A clause as the sentence says it: the verb with its auxiliaries, negation and adverbs, and each of its arguments
whole (the argument's full subtree, determiners, numbers and negations included), rendered with the text's own
spacing. M0's facts are made of these (clauses.py, offline.py).

Why whole subtrees: a fact assembled from chosen words ("Buffalo is on 1 skid following 9 2 start", "one has more
riding" for "no one has more riding") reads garbled or says the opposite; the sentence's own words in its own order
do not. A clause over MAX_WORDS loses whole arguments from its end, then whole modifiers from inside its last
argument; one that still does not fit gives no fact (a fact cut mid-phrase is not a statement).

Not a fact: a clause inside a condition ("if", "unless", "whether"), a question, and a verb that only the
sentence's leading modifiers precede (those frame the story: "In a stunning turn, X did Y" is "X did Y")."""

from __future__ import annotations

from collections.abc import Iterable

from spacy.tokens import Doc, Token

MAX_WORDS = 36  # a sentence's whole clause, not a headline: long enough for the story's words to stay
SUBJECT_DEPS = {"nsubj", "nsubjpass"}
CLAUSAL_SUBJECT_DEPS = SUBJECT_DEPS | {"csubj", "csubjpass", "expl"}
VERB_KEEP_DEPS = {"aux", "auxpass", "neg", "prt"}
# Children of a verb that are never part of its clause: its subject (rendered apart), verbs conjoined with it (each
# a clause of its own; a noun the parse conjoined with the verb is an argument) and their conjunction, the marker
# that subordinates it, and punctuation.
NOT_ARGUMENT_DEPS = CLAUSAL_SUBJECT_DEPS | {"conj", "cc", "mark", "punct", "preconj", "intj", "meta"}
CONDITION_MARKERS = {"if", "unless", "whether"}
ATTRIBUTIONS = {"according"}  # "according to a report in X": who said it, not what happened
# Dropped first when a clause is too long, rightmost first: modifiers; then what an argument's own head carries.
OPTIONAL_DEPS = {"prep", "advcl", "npadvmod", "advmod", "dep", "parataxis", "agent", "dative"}
TRIMMABLE_DEPS = {"relcl", "acl", "prep", "appos", "advcl", "conj", "cc", "ccomp", "npadvmod", "advmod", "punct"}
EDGE_PUNCT = {",", ";", ":", "-", "--", "—", "–", "|", "/"}
GAP_PUNCT = {",", ";", "-", "–", "—", "/", "&"}  # the text's own punctuation between two kept words stays
EDGE_WORDS = {"and", "or", "but", "nor", "&"}  # a clause never ends on a conjunction left by a dropped conjunct
NOUN_PHRASE_POS = {"NOUN", "PROPN", "ADJ", "DET", "NUM"}
QUOTES = {'"', "“", "”", "‘", "’", "'", "``", "''", "«", "»"}


def subtree_ids(token: Token) -> set[int]:
    return {t.i for t in token.subtree}


def is_condition(verb: Token) -> bool:
    """The verb's clause, or one it is part of, is a condition ("if", "unless", "whether"), or depends on one ("If
    she wins, she will move"): "If they believed Trump was a buffoon …" states neither."""
    nodes = [verb, *verb.ancestors]
    nodes += [c for node in nodes for c in node.children if c.dep_ == "advcl"]
    return any(any(c.dep_ == "mark" and c.lower_ in CONDITION_MARKERS for c in node.children) for node in nodes)


def is_question(verb: Token) -> bool:
    sentence = verb.sent
    return sentence[-1].text == "?" or (len(sentence) > 1 and sentence[-2].text == "?")


def verb_group(verb: Token, after: int) -> set[int]:
    """The verb, its auxiliaries, negation and particles, and the adverbs between `after` (the subject's end) and
    the verb ("X has never been arrested", "X also said")."""
    group = {verb.i}
    for child in verb.children:
        if child.dep_ in VERB_KEEP_DEPS or (child.dep_ == "advmod" and after < child.i < verb.i):
            group.add(child.i)
    return group


def arguments(verb: Token, after: int) -> list[Token]:
    """The verb's arguments after the subject (`after`: the index the subject ends at), in sentence order."""
    return [
        c
        for c in verb.children
        if c.i > after
        and (c.dep_ not in NOT_ARGUMENT_DEPS or (c.dep_ == "conj" and c.pos_ not in ("VERB", "AUX")))
        and c.dep_ not in VERB_KEEP_DEPS
        and c.lower_ not in ATTRIBUTIONS
        and not (c.dep_ == "advmod" and c.i < verb.i)
    ]


def clause_end(verb: Token) -> int:
    """Where the verb's clause must end: before the conjunction that joins the next verb conjoined with it. Also
    when the parse hung that verb's own subject on this clause ("X scored for the Sabres and Linus Ullmark stopped
    22 shots": "Linus Ullmark" parsed as a second team, "stopped" as X's)."""
    later = [c for c in verb.children if c.dep_ == "conj" and c.pos_ in ("VERB", "AUX") and c.i > verb.i]
    if not later:
        return verb.sent.end
    start = own_subject_start(later[0]) or later[0].left_edge.i
    while start > verb.i + 1 and (verb.doc[start - 1].dep_ == "cc" or verb.doc[start - 1].is_punct):
        start -= 1
    return start


def own_subject_start(verb: Token) -> int | None:
    """Where the words naming a conjoined verb's own subject start, when the parse missed that subject: a noun or
    pronoun right before the verb, past adverbs and auxiliaries, after the conjunction ("and Linus Ullmark
    stopped"); None when nothing but adverbs stands there ("and later arrested")."""
    doc = verb.doc
    floor = max(verb.sent.start, verb.head.i + 1) if verb.head.i < verb.i else verb.sent.start  # after the first verb
    i = verb.i - 1
    while i > floor and doc[i].pos_ in ("ADV", "AUX", "PART"):
        i -= 1
    if i < floor or doc[i].pos_ not in ("NOUN", "PROPN", "PRON"):
        return None
    while i - 1 > floor and doc[i - 1].pos_ in NOUN_PHRASE_POS and doc[i - 1].dep_ != "cc":
        i -= 1
    return i


def _words(doc: Doc, ids: set[int]) -> int:
    return sum(1 for i in ids if not doc[i].is_punct)


def fit(doc: Doc, core: set[int], parts: list[Token], limit: int | None = None) -> set[int] | None:
    """`core` with the subtrees of `parts`, within `limit` words: whole optional parts are dropped from the end
    first, then whole modifiers from inside the last part. None when even that does not fit."""
    limit = MAX_WORDS if limit is None else limit
    end = _end_of(doc, core)
    parts = list(parts)
    while True:
        ids = _before(core.union(*(subtree_ids(p) for p in parts)), end)
        if _words(doc, ids) <= limit:
            return ids
        optional = [p for p in parts if p.dep_ in OPTIONAL_DEPS]
        if optional and len(parts) > 1:
            parts.remove(optional[-1])
            continue
        if not parts:
            return None
        rest = core.union(*(subtree_ids(p) for p in parts[:-1]))
        trimmed = _trim(doc, parts[-1], limit - _words(doc, rest))
        return None if trimmed is None else _before(rest | trimmed, end)


def _before(ids: set[int], end: int | None) -> set[int]:
    return ids if end is None else {i for i in ids if i < end}


def _end_of(doc: Doc, core: set[int]) -> int | None:
    verbs = [doc[i] for i in sorted(core) if doc[i].pos_ in ("VERB", "AUX") and doc[i].dep_ not in VERB_KEEP_DEPS]
    return clause_end(verbs[0]) if verbs else None


def _trim(doc: Doc, head: Token, limit: int) -> set[int] | None:
    """The head's subtree without its rightmost trimmable modifiers, one at a time, until it fits; when none is
    left to drop at this level, the same inside its last child ("with 22 games (the addition of …)" keeps "with
    22 games")."""
    kept = list(head.children)
    while True:
        ids = {head.i}.union(*(subtree_ids(c) for c in kept))
        if _words(doc, ids) <= limit:
            return ids
        trimmable = [c for c in kept if c.dep_ in TRIMMABLE_DEPS and c.i > head.i]
        if trimmable:
            kept.remove(trimmable[-1])
            continue
        after = [c for c in kept if c.i > head.i]
        if not after:
            return None
        rest = {head.i}.union(*(subtree_ids(c) for c in kept if c is not after[-1]))
        inner = _trim(doc, after[-1], limit - _words(doc, rest))
        return None if inner is None else rest | inner


def render(doc: Doc, ids: Iterable[int]) -> str:
    """The tokens in sentence order with the text's own spacing ("1-6-2", "$4.99", "we'll"; a gap where words were
    left out is one space); quotes dropped, no punctuation at either end, brackets only in pairs."""
    kept = _balanced(doc, sorted(i for i in ids if doc[i].text not in QUOTES))
    pieces: list[list[str]] = []  # [text, the space after it]
    previous = None
    for i in kept:
        if pieces and previous is not None and i != previous + 1:
            between = range(previous + 1, i)
            if all(doc[j].text in GAP_PUNCT for j in between):
                pieces[-1][1] = doc[previous].whitespace_  # "$13.7 billion, its largest": the text's own commas
                pieces += [[doc[j].text, doc[j].whitespace_] for j in between]
            elif not all(doc[j].text in QUOTES and not doc[j].whitespace_ for j in between):
                pieces[-1][1] = " "
        pieces.append([doc[i].text, doc[i].whitespace_])
        previous = i
    return _strip_edges("".join(text + space for text, space in pieces))


def _balanced(doc: Doc, kept: list[int]) -> list[int]:
    opened = [i for i in kept if doc[i].text in ("(", "[")]
    closed = [i for i in kept if doc[i].text in (")", "]")]
    if len(opened) == len(closed):
        return kept
    return [i for i in kept if doc[i].text not in ("(", "[", ")", "]")]


def _strip_edges(text: str) -> str:
    words = text.split()
    while words and (words[-1] in EDGE_PUNCT or words[-1].lower() in EDGE_WORDS):
        words.pop()
    while words and words[0] in EDGE_PUNCT:
        words.pop(0)
    text = " ".join(words)
    while text and text[-1] in ".!?,;:":
        text = text[:-1].rstrip()
    return text


def has_address(doc: Doc, ids: Iterable[int]) -> bool:
    """A web address or a handle among the words: an embedded post or a link, not the article's own statement."""
    return any(doc[i].like_url or doc[i].like_email or doc[i].text.startswith("@") for i in ids)
