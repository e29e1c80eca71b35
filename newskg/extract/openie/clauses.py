"""M0's subject-centric facts: one clause per verb a linked entity is the subject of, in the sentence's own words
(spans.py), so the story ("laid off 2,400 workers", "launched a campaign against meth") reaches a fact even when no
second entity is in the sentence. The offline analogue of NEON's subject-centric M1.

- Subject clause ("subject"): the entity is the (passive) subject of a verb, or conjoined with one: its canonical
  name, then the verb's clause. Each verb conjoined with that verb and sharing its subject ("stopped a van … and
  later arrested the driver") is a clause of its own.
- The acting party ("acting"): an organisation in a prepositional modifier of a common-noun subject ("Officers from
  X arrested …") is the clause's subject, its fact keeping the words it acts through ("Officers from X …").
- Reported speech: the speaker of a clause reported before the speech verb ("…, said Capt. Y") reads
  "Capt. Y said <the reported clause>".
- Salient mention ("salient"): an entity named inside a main clause whose subject is a noun phrase but no entity
  ("Layoffs at WeWork hit 2,400 staff"): that whole clause, subject included, about each entity in it. Not when the
  subject is a pronoun ("I", "you", "it", "this": the writer, the reader, or something only the text before names)
  and not for an entity outside the clause: a clause is about what it names.

A clause that is only its verb gives nothing; texts are deduplicated and capped per chunk (subject clauses first, in
sentence order) so a long chunk cannot flood the graph."""

from __future__ import annotations

from dataclasses import dataclass

from spacy.tokens import Doc, Token

from newskg.extract.entities.linker import LinkedMention
from newskg.extract.openie.checks import cut_name, dangles, speech_without_content, writer_voice
from newskg.extract.openie.parse import Acting, acting, conjoined_verbs, mention_root, mention_tokens
from newskg.extract.openie.spans import (
    CLAUSAL_SUBJECT_DEPS,
    QUOTES,
    SUBJECT_DEPS,
    arguments,
    fit,
    has_address,
    is_condition,
    is_question,
    render,
    subtree_ids,
    verb_group,
)
from newskg.extract.openie.speech import SPEECH_VERBS

MAX_CLAUSES_PER_CHUNK = 12
# The rules that make M0 facts (`Interaction.rule`): "pair" (a subject clause naming a second entity, offline.py),
# "subject", "acting", "reported" (a clause inside someone's words, credited to them) and "salient" (above).
RULES = ("pair", "subject", "acting", "reported", "salient")
CONTENT_POS = {"NOUN", "PROPN", "NUM", "ADJ", "VERB", "ADV"}
# The strict checks a clause can fail (checks.py; "not_topical": an entity named in passing in a salient clause).
DOUBTS = ("cut_name", "writer_voice", "dangles", "speech_without_content", "not_topical")
# The checks that drop a clause under the wide rules too, not only record it as a doubt: a fact under a name the
# recogniser cut, one ending on a word that needs more ("… to the"), a speech verb without what was said ("Microsoft
# said on Monday"). Issue 27's per-check ablation (`newskg eval facts`, `bench/replay.py`, one session): these three
# cost no replay recall on any set and raised fact precision 0.590 -> 0.615 (news), 0.633 -> 0.658 (fresh);
# writer_voice and not_topical each cost held-out recall (a press release's "our", first-person reviews, salient
# clauses carrying a question's words), so wide rules only record those two.
DROPPED = frozenset({"cut_name", "dangles", "speech_without_content"})


@dataclass(frozen=True)
class Clause:
    subject: LinkedMention
    text: str
    sentence: int
    rule: str = "subject"  # which rule made it (RULES): the fact-precision evaluation reports each one
    ids: frozenset[int] = frozenset()  # the clause's tokens (a second entity among them makes a pair fact)
    verb: int = -1
    # The strict checks it fails (DOUBTS): strict rules drop such a clause, wide rules drop it for those in DROPPED
    # and otherwise keep it, its fact's confidence reading them (confidence.py).
    doubts: frozenset[str] = frozenset()

    @property
    def kept(self) -> bool:
        """Whether wide rules write it: it fails none of the DROPPED checks."""
        return not self.doubts & DROPPED


def reported_before(verb: Token) -> list[Token]:
    """The clauses a speech verb reports before itself, each with a subject of its own ("Officers … arrested …,
    said Y")."""
    if verb.lower_ not in SPEECH_VERBS:
        return []
    return [c for c in verb.children if c.dep_ == "ccomp" and c.i < verb.i and _has_subject(c)]


def reporter(verb: Token) -> tuple[Token, Token] | None:
    """(the speech verb, its reported clause) when `verb` stands in what someone said or thinks ("Richardson said
    Rudolph should be disciplined": said, be disciplined). Not through a conjoined clause: "X said A, and B
    happened" may be the writer's B."""
    node = verb
    while node.head.i != node.i and node.dep_ in ("xcomp", "ccomp"):
        if node.dep_ == "ccomp" and node.head.lower_ in SPEECH_VERBS:
            return node.head, node
        node = node.head
    return None


def _has_subject(verb: Token) -> bool:
    return any(c.dep_ in SUBJECT_DEPS for c in verb.children)


def _has_content(doc: Doc, ids: set[int], verb: Token) -> bool:
    group = verb_group(verb, verb.i)
    return any(doc[i].pos_ in CONTENT_POS for i in ids - group)


def states_a_fact(verb: Token) -> bool:
    return not is_condition(verb) and not is_question(verb)


def _no_fact(doc: Doc, ids: set[int], verb: Token, quoted: bool = False, strict: bool = False) -> bool:
    """A clause with nothing but its verb, or an embedded post; with `strict` rules also one with a doubt."""
    if not _has_content(doc, ids, verb) or has_address(doc, ids):
        return True
    return strict and bool(doubts_of(doc, ids, verb, quoted))


def doubts_of(doc: Doc, ids: set[int], verb: Token, quoted: bool = False) -> frozenset[str]:
    """Why a reader may not take the clause on its own (checks.py). `quoted`: the words are someone's, credited
    in the fact, so "I" and "we" are theirs."""
    found = {
        "writer_voice": not quoted and writer_voice(doc, ids),
        "dangles": dangles(doc, ids),
        "speech_without_content": speech_without_content(verb, ids, SPEECH_VERBS),
    }
    return frozenset(name for name, failed in found.items() if failed)


class Names:
    """The canonical name of each linked token: a pronoun the linker resolved names its speaker ("he said")."""

    def __init__(self, mentions: list[LinkedMention], tokens: dict[int, list[Token]]):
        self.at = {t.i: m.name for m in mentions for t in tokens[id(m)]}

    def of(self, doc: Doc, subject: Token) -> str | None:
        if subject.i in self.at:
            return self.at[subject.i]
        if subject.pos_ == "PRON":
            return None  # "he said", unresolved: whose words these are is lost
        return render(doc, subtree_ids(subject))


def _attributed(
    doc: Doc, speech: Token, content: Token, names: Names, strict: bool
) -> tuple[str, set[int], frozenset[str]] | None:
    """ "<speaker> <speech verb> <what was said>" for a clause someone reports; None when the speaker is unknown."""
    speaker = next((c for c in speech.children if c.dep_ in SUBJECT_DEPS), None)
    name = names.of(doc, speaker) if speaker is not None else None
    said = fit(doc, set(), [content])
    if name is None or said is None or _no_fact(doc, said, content, quoted=True, strict=strict):
        return None
    group = verb_group(speech, max(subtree_ids(speaker)) if speaker is not None else speech.i)
    return f"{name} {render(doc, group - said)} {_inner(doc, said)}", said, doubts_of(doc, said, content, quoted=True)


@dataclass(frozen=True)
class Actor:
    """A subject mention, its tokens (`own`) and the verb it is the acting party of (parse.acting)."""

    subject: LinkedMention
    own: list[Token]
    act: Acting


def _subject_clause(doc: Doc, actor: Actor, verb: Token, after: int, names: Names, strict: bool) -> Clause | None:
    """The clause of one verb the subject acts in; `after`: the index the subject (or the verb before) ends at. A
    clause inside what someone said keeps who said it (rule "reported"), when the text names them."""
    subject, own, act = actor.subject, actor.own, actor.act
    cut = frozenset({"cut_name"}) if cut_name(own) else frozenset[str]()
    report = reporter(verb)
    found = _attributed(doc, *report, names, strict) if report is not None else None
    if found is not None:
        return Clause(subject, found[0], -1, "reported", frozenset(found[1]), verb.i, found[2] | cut)
    reported = reported_before(verb) if verb.i == act.verb.i else []
    ids = fit(doc, verb_group(verb, after), [*reported, *arguments(verb, after)])
    if ids is None or _no_fact(doc, ids, verb, quoted=verb.lower_ in SPEECH_VERBS, strict=strict):
        return None
    head = _subject_words(doc, actor)
    said = set[int]().union(*(subtree_ids(c) for c in reported)) & ids
    text = f"{head} {render(doc, ids - said)} {_inner(doc, said)}".strip()
    doubts = doubts_of(doc, ids, verb, quoted=verb.lower_ in SPEECH_VERBS) | cut
    return Clause(subject, text, -1, "acting" if act.lead else "subject", frozenset(ids), verb.i, doubts)


def _inner(doc: Doc, ids: set[int]) -> str:
    """A reported clause placed after its speech verb: "Y said the company …", not "Y said The company …"."""
    text = render(doc, ids)
    first = next((doc[i] for i in sorted(ids) if doc[i].text not in QUOTES), None)
    if first is None or first.pos_ == "PROPN" or first.text in ("I", "I'm", "I’m") or not text:
        return text
    return text[0].lower() + text[1:]


def _subject_words(doc: Doc, actor: Actor) -> str:
    """How the fact names its subject: the entity's name, after the words it acts through ("Officers from X"); or,
    when the verb's subject is a coordination the entity is one part of ("Deval Patrick and Michael Bloomberg are
    moving …"), that whole subject as the text says it, so the verb agrees and no one takes another's part."""
    subject, own, act = actor.subject, actor.own, actor.act
    subject_root = next((c for c in act.verb.children if c.dep_ in SUBJECT_DEPS), None)
    inside = {t.i for t in own}
    root = next(t for t in own if t.head.i not in inside or t.head.i == t.i)
    coordinated = subject_root is not None and any(c.dep_ == "conj" for c in subject_root.children)
    if coordinated and not act.lead and subject_root is not None and root.i in subtree_ids(subject_root):
        return render(doc, subtree_ids(subject_root))
    return " ".join([*(t.text for t in act.lead), subject.name])


def subject_clauses(
    doc: Doc, mentions: list[LinkedMention], tokens: dict[int, list[Token]], strict: bool = False
) -> list[Clause]:
    """Per subject mention, the clause of its verb, then one per verb conjoined with it; none that fails a DROPPED
    check (a subject whose name the recogniser cut, checks.cut_name, among them)."""
    names = Names(mentions, tokens)
    out: list[Clause] = []
    for subject in mentions:
        own = tokens[id(subject)]
        act = acting(subject, own) if own else None
        if act is None or (strict and cut_name(own)):
            continue
        after = max(t.i for t in [*own, *act.lead])
        actor = Actor(subject, own, act)
        previous = None
        for verb in [act.verb, *conjoined_verbs(act.verb)]:
            start = after if previous is None else previous.i
            previous = verb
            if not states_a_fact(verb):
                continue
            clause = _subject_clause(doc, actor, verb, start, names, strict)
            if clause is not None and clause.kept:
                out.append(clause)
    return out


def _noun_subject(verb: Token) -> Token | None:
    """The verb's subject when it is a noun phrase that names something here (not a pronoun), else None."""
    subject = next((c for c in verb.children if c.dep_ in CLAUSAL_SUBJECT_DEPS), None)
    if subject is None or (subject.pos_ == "PRON" and subject.dep_ != "expl"):
        return None
    return subject


def _salient_ids(doc: Doc, subject: Token, verb: Token, after: int) -> set[int] | None:
    core = verb_group(verb, after) | ({subject.i} if subject.dep_ == "expl" else set[int]())
    parts = [*([] if subject.dep_ == "expl" else [subject]), *arguments(verb, after)]
    return fit(doc, core, parts)


TOPIC_DEPS = {"dobj", "attr", "nsubjpass", "dative", "oprd"}
QUALIFIER_PATH = {"compound", "poss", "nmod", "pobj", "prep", "amod", "appos", "case"}


def topical(root: Token, subject: Token, verb: Token) -> bool:
    """The mention is what the clause is about: its subject's head or a word qualifying it within two steps
    ("WeWork's layoffs", "Layoffs at WeWork"), or the verb's object likewise ("teased the Doobie Brothers tour");
    not a name in passing deep inside an argument ("… games like Temple Run")."""
    node = root
    for _ in range(3):
        if node.i == subject.i or (node.head.i == verb.i and node.dep_ in TOPIC_DEPS):
            return True
        if node.dep_ not in QUALIFIER_PATH or node.head.i == node.i:
            return False
        node = node.head
    return False


def _reports(verb: Token) -> bool:
    """A speech verb reporting a clause ("X said Y …"): those are someone's words, credited in subject clauses."""
    return verb.lower_ in SPEECH_VERBS and any(c.dep_ == "ccomp" for c in verb.children)


def _aside(own: list[Token], subject: Token, verb: Token) -> frozenset[str]:
    """The doubts of a mention inside a salient clause: named in passing, or a cut name."""
    found = {"not_topical": not topical(mention_root(own), subject, verb), "cut_name": cut_name(own)}
    return frozenset(name for name, failed in found.items() if failed)


def salient_clauses(
    doc: Doc,
    mentions: list[LinkedMention],
    tokens: dict[int, list[Token]],
    subject_roots: set[int],
    strict: bool = False,
) -> list[Clause]:
    """Each main clause (not a speech verb's: those are someone's words) with a noun-phrase subject that is no
    entity: the clause, about each entity inside it (with `strict` rules: each entity it is about, `topical`)."""
    out: list[Clause] = []
    for n, sentence in enumerate(doc.sents):
        head = sentence.root
        subject = _noun_subject(head) if head.pos_ in ("VERB", "AUX") and not _reports(head) else None
        if subject is None:
            continue
        previous = None
        for verb in [head, *conjoined_verbs(head)]:
            after = max(subtree_ids(subject)) if previous is None else previous.i
            previous = verb
            ids = _salient_ids(doc, subject, verb, after) if states_a_fact(verb) else None
            if ids is None or _no_fact(doc, ids, verb, strict=strict):
                continue
            inside = [m for m in mentions if tokens[id(m)] and {t.i for t in tokens[id(m)]} <= ids]
            if any(tokens[id(m)][0].i in subject_roots for m in inside):
                continue  # an entity is the clause's subject: its subject clause says it
            text = render(doc, ids)
            doubts = doubts_of(doc, ids, verb)
            for m in inside:
                aside = _aside(tokens[id(m)], subject, verb)
                clause = Clause(m, text, n, "salient", frozenset(ids), verb.i, doubts | aside)
                if not (strict and aside) and clause.kept:
                    out.append(clause)
    return out


def extract_clauses(
    doc: Doc,
    mentions: list[LinkedMention],
    subjects: set[str] | None = None,
    known: set[tuple[str, str]] | None = None,
    strict: bool = False,
) -> list[Clause]:
    """Subject clauses, then salient-mention clauses, deduplicated per entity (also against `known`, the chunk's
    (subject id, text) pair facts) and capped at MAX_CLAUSES_PER_CHUNK. `subjects`: entity ids allowed as
    subjects."""
    tokens = {id(m): mention_tokens(doc, m) for m in mentions}
    sentence_of = {t.i: n for n, sent in enumerate(doc.sents) for t in sent}
    subject_roots = {tokens[id(m)][0].i for m in mentions if tokens[id(m)] and acting(m, tokens[id(m)]) is not None}
    found = subject_clauses(doc, mentions, tokens, strict) + salient_clauses(
        doc, mentions, tokens, subject_roots, strict
    )
    seen = {(entity, text.lower()) for entity, text in known or set()}
    clauses: list[Clause] = []
    for clause in found:
        if subjects is not None and clause.subject.entity_id not in subjects:
            continue
        key = (clause.subject.entity_id, clause.text.lower())
        if key in seen:
            continue
        seen.add(key)
        clauses.append(
            Clause(
                clause.subject,
                clause.text,
                sentence_of[clause.verb],
                clause.rule,
                clause.ids,
                clause.verb,
                clause.doubts,
            )
        )
        if len(clauses) == MAX_CLAUSES_PER_CHUNK:
            break
    return clauses
