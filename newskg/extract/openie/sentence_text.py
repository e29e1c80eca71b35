"""A fact in its sentence's own words, when the sentence can stand alone.

A clause cut out of a sentence (spans.py) loses what the words around it carried: who said it ("Pompeo said the war
may end" read as "Afghan war may soon conclude"), the condition it holds under, the numbers of a score, the
second half of a comparison. Read as a user would, about two in five cut clauses of real pages were garbled or no
longer true (`newskg eval facts`). A short, declarative sentence whose main clause the fact comes from says the
same thing whole, so that sentence is the fact's text:

- at most MAX_WORDS words, ending on a full stop (not a headline, a caption or a list item), starting on a
  capital;
- the fact's verb is the sentence's main verb, a verb conjoined with it, or the content of a speech verb that is
  the main verb ("X said Y …", whose speaker stays in the text);
- no quotation left open (a sentence out of a longer quotation is not the whole of it);
- no pronoun the fact could not resolve on its own ("she", "this", "they"): a subject pronoun the linker resolved
  to the fact's entity reads as that entity's name instead.
Otherwise the clause stays the fact's text."""

from __future__ import annotations

from spacy.tokens import Span, Token

from newskg.extract.openie.checks import WRITER_WORDS
from newskg.extract.openie.spans import QUOTES, SUBJECT_DEPS
from newskg.extract.openie.speech import SPEECH_VERBS

MAX_WORDS = 40
FULL_STOPS = (".", "!")
# Pronouns a reader of the sentence alone cannot resolve (relative "that"/"which" and expletive "it" are no
# reference: the parse marks them).
OPEN_PRONOUNS = {"he", "she", "they", "him", "her", "them", "his", "hers", "their", "theirs", "it", "its"}
OPEN_DEMONSTRATIVES = {"this", "that", "these", "those"}


def sentence_text(verb: Token, subject: list[Token], name: str) -> str | None:
    """The fact's sentence as its text, or None when the sentence cannot stand alone (the clause is used)."""
    sentence = verb.sent
    if not _stands_alone(sentence) or not _main_clause(verb, sentence.root):
        return None
    inside = {t.i for t in subject}
    pronoun = subject[0] if len(subject) == 1 and subject[0].pos_ == "PRON" else None
    if any(_open_reference(t) for t in sentence if t.i not in inside):
        return None
    if pronoun is not None and pronoun.dep_ not in SUBJECT_DEPS:
        return None  # "his" resolved to X: "X's …" would need rewriting the phrase
    return _render(sentence, pronoun, name)


def _stands_alone(sentence: Span) -> bool:
    words = [t for t in sentence if not (t.is_punct or t.is_space)]
    if not words or len(words) > MAX_WORDS:
        return False
    last = next(t for t in reversed(sentence) if not t.is_space and t.text not in QUOTES)
    first = next((t for t in sentence if not t.is_space and t.text not in QUOTES), None)
    starts_capital = first is not None and first.text[:1].isupper()
    writer = any(t.lower_ in WRITER_WORDS for t in sentence) and not any(t.text in QUOTES for t in sentence)
    return last.text in FULL_STOPS and starts_capital and not writer and _quotes_closed(sentence)


def _quotes_closed(sentence: Span) -> bool:
    """A quotation opened in the sentence ends in it: a sentence cut out of a longer quotation is not whole."""
    straight = sum(t.text.count('"') for t in sentence)
    curly = sum(t.text.count("“") for t in sentence) - sum(t.text.count("”") for t in sentence)
    return straight % 2 == 0 and curly == 0


def _main_clause(verb: Token, root: Token) -> bool:
    if verb.i == root.i or (verb.dep_ == "conj" and verb.head.i == root.i):
        return True
    return root.lower_ in SPEECH_VERBS and verb.dep_ == "ccomp" and verb.head.i == root.i


def _open_reference(token: Token) -> bool:
    lower = token.lower_
    if lower in OPEN_PRONOUNS:
        return token.dep_ != "expl"
    return lower in OPEN_DEMONSTRATIVES and token.dep_ in (*SUBJECT_DEPS, "dobj", "pobj")


def _render(sentence: Span, pronoun: Token | None, name: str) -> str:
    if pronoun is None:
        return sentence.text.strip()
    before = sentence.doc[sentence.start : pronoun.i].text_with_ws
    after = sentence.doc[pronoun.i + 1 : sentence.end].text
    capital = name if pronoun.i > sentence.start else name[:1].upper() + name[1:]
    return f"{before}{capital}{pronoun.whitespace_}{after}".strip()
