"""IRB questions generated from our own graph as of a day (issue 15, paper §3 in our own words).

Factual scaffold: every visible interaction between two entities, and every clause of an entity's without an
object (M0's subject-centric facts), is a keypoint; the chunks that evidence it are its passages and their
articles the question's qrels. A keypoint is kept only when one of its passages names its entities and states
every number the keypoint states (rules.passage_rejection). The keypoints of one claim are the interactions of
the same (subject, object, event day); a clause without an object is a claim of its own.

Algorithmic scaffold: a claim's nodes are its entities, its day and its keypoint's other words (predicate and
arguments). A node is masked (becomes the answer) when it passes the rules of Appendix A.1 (rules.mask_rejection;
against the arguments: not written inside a longer name) and its answer is unique as Cypher counts it as of the
day: the only entity that had a reported interaction with the known one that day (graph/store/questions.PARTNERS),
or, for a clause without an object, the only entity whose clause that day reads the same around it
(questions.CLAUSE_SUBJECTS).
A single-hop question is a cloze of the keypoint: its words with the masked entity as "which <kind>", numbers
kept ("As of D, Ada Lovelace sold 2,500 shares to which organization on March 1, 2031?"), so it is never broader
than the count that made it unique. 2-hop questions chain two claims through a bridge (template wording): the
masked node of the inner claim is the known node of the outer one.

Robustness: each question is written in one paraphrase (none, short name, date relative to the as-of day, that
distance and the keypoint's numbers spelled out) or as a false-premise variant (the known person's surname
swapped, or the date distorted), kept only when Cypher confirms the premise false as of the day. With an LLM, the
wording is rewritten and the rewrite is kept only when it still names the kept phrases, does not leak the answer,
and the graph checks pass.

Rejections are counted by reason; the same graph, day and seed give the same questions, byte for byte."""

from __future__ import annotations

import hashlib
import random
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from newskg.core.timeaxes import day_iso, day_words, shift_day
from newskg.evaluation.irb import rules
from newskg.evaluation.irb.prompts import rewrite
from newskg.evaluation.irb.records import IRBQuestion, Keypoint, MaskedNode, Paraphrase, Source
from newskg.evaluation.kit.sources import SOURCES, source_params
from newskg.graph.store import questions as question_reads
from newskg.graph.store.asof import LATEST_DAY, AsOf
from newskg.graph.store.mentions import window_counts
from newskg.graph.store.rows import rows_of
from newskg.graph.store.store import GraphStore

if TYPE_CHECKING:
    from newskg.core.llm.client import LLMClient

Role = Literal["subject", "object"]
Variant = Literal["none", "short_name", "relative_date", "spelled_number", "false_name", "false_date"]
SINGLE_VARIANTS: tuple[Variant, ...] = (
    "none",
    "short_name",
    "relative_date",
    "spelled_number",
    "false_name",
    "false_date",
)
TWO_HOP_VARIANTS: tuple[Variant, ...] = ("none", "short_name", "relative_date", "spelled_number")
TWO_HOP = "{lead}which {kind} had a reported interaction {when_outer} with the {bridge_kind} that had a reported interaction with {known} {when_inner}?"  # noqa: E501
KINDS = {"person": "person", "per": "person", "organization": "organization", "org": "organization"}
MASK_ORDER: tuple[tuple[Role, Role], ...] = (("object", "subject"), ("subject", "object"))  # (masked, known)
NOT_APPLICABLE = "variant_not_applicable"
PLACES = frozenset({"gpe", "loc", "location"})


@dataclass(frozen=True)
class FactRow:
    """questions.FACTS: one interaction with its visible passages ([chunk id, text]) and each passage's articles."""

    id: str
    text: str | None
    event_day: int
    subject_id: str
    subject_name: str
    subject_type: str | None
    object_id: str | None  # None: the subject's own clause (M0's subject-centric facts)
    object_name: str | None
    object_type: str | None
    chunks: list[list[str | None]]
    articles: list[list[str]]


@dataclass(frozen=True)
class PartnerRow:
    id: str
    name: str


@dataclass(frozen=True)
class KeyedPartnerRow:
    """questions.PARTNERS_MANY: a partner of `entity` on `event_day`."""

    entity: str
    event_day: int
    id: str
    name: str


@dataclass(frozen=True)
class CountRow:
    n: int


@dataclass(frozen=True)
class Entity:
    id: str
    name: str
    type: str | None


@dataclass(frozen=True)
class TextRow:
    text: str


@dataclass
class Claim:
    subject: Entity
    object: Entity | None  # None: one clause of the subject's without an object (a claim of its own)
    event_day: int
    keypoints: list[Keypoint] = field(default_factory=lambda: list[Keypoint]())
    texts: list[str] = field(default_factory=lambda: list[str]())  # the interactions' own words (coverage)


@dataclass(frozen=True)
class Masked:
    """A claim with one node masked: the question asks for `masked`, given `known` (None for a clause without an
    object), the keypoint's other words and the day."""

    claim: Claim
    known: Entity | None
    masked: Entity
    role: Role

    @cached_property  # read by the masking checks and again by the writer: found once per candidate
    def text(self) -> str | None:
        """The keypoint the question is a cloze of: the claim's first that names the masked and the known entity
        and does not write the masked name inside a longer one (None: no keypoint can be asked this way)."""
        names = [self.masked.name.lower()] + ([self.known.name.lower()] if self.known else [])
        for text in self.claim.texts:
            if all(n in text.lower() for n in names) and not rules.embedded_in_longer_name(self.masked.name, text):
                return text
        return None


@dataclass(frozen=True)
class Base:
    """A question before its wording: single-hop (inner only) or 2-hop (inner resolves the bridge, outer asks)."""

    inner: Masked
    outer: Masked | None = None

    @property
    def answer(self) -> Entity:
        return (self.outer or self.inner).masked


@dataclass(frozen=True)
class FalsePremise:
    """What a false-premise question gets wrong: the premise in words (the question's only fact that is false), the
    true answer a reader should give instead with its other accepted spellings, and the swapped surname
    (`false_name`) or the distorted day (`false_date`) it was built from."""

    premise: str
    answer: str
    aliases: list[str]
    name: str | None = None
    day: int | None = None


@dataclass
class Generation:
    questions: list[IRBQuestion]
    rejected: Counter[str]
    facts: int = 0
    claims: int = 0
    maskable: int = 0
    two_hop_chains: int = 0


class Checker:
    """The graph checks of generation, as of one day for one source, cached per (entity, day)."""

    def __init__(self, store: GraphStore, as_of: AsOf, source: str) -> None:
        self.store = store
        self.params: dict[str, object] = {**as_of.params(), **source_params(source)}
        self._partners: dict[tuple[str, int], list[PartnerRow]] = {}

    def partners(self, entity_id: str, event_day: int) -> list[PartnerRow]:
        key = (entity_id, event_day)
        if key not in self._partners:
            rows = question_reads.partners(self.store, self.params, entity_id, event_day)
            self._partners[key] = rows_of(PartnerRow, rows)
        return self._partners[key]

    def prefetch_partners(self, keys: Iterable[tuple[str, int]], batch: int = 500) -> None:
        """Fill the partners cache for many (entity, event day) keys, `batch` keys a round trip (questions.PARTNERS_MANY
        returns what PARTNERS would for each): one query per key was most of generation's time on a large graph."""
        missing = sorted({k for k in keys if k not in self._partners})
        for start in range(0, len(missing), batch):
            chunk = missing[start : start + batch]
            found: dict[tuple[str, int], list[PartnerRow]] = {k: [] for k in chunk}
            for row in rows_of(KeyedPartnerRow, question_reads.partners_many(self.store, self.params, chunk)):
                found[(row.entity, row.event_day)].append(PartnerRow(row.id, row.name))
            self._partners.update(found)

    def unique_partner(self, entity_id: str, event_day: int) -> PartnerRow | None:
        found = self.partners(entity_id, event_day)
        return found[0] if len(found) == 1 else None

    def name_on_day(self, fake_name: str, event_day: int) -> int:
        initial, surname = fake_name[0].lower(), " " + fake_name.split()[-1].lower()
        return rows_of(CountRow, question_reads.name_on_day(self.store, self.params, initial, surname, event_day))[0].n

    def clause_subjects(self, prefix: str, suffix: str, event_day: int) -> list[PartnerRow]:
        """The entities whose visible clause on the day reads prefix + <entity> + suffix (questions.CLAUSE_SUBJECTS)."""
        return rows_of(PartnerRow, question_reads.clause_subjects(self.store, self.params, prefix, suffix, event_day))

    def interaction_text(self, interaction_id: str) -> str:
        rows = rows_of(TextRow, question_reads.interaction_text(self.store, self.params, interaction_id))
        return rows[0].text if rows else ""

    def entity_on_day(self, entity_id: str, event_day: int) -> int:
        return rows_of(CountRow, question_reads.entity_on_day(self.store, self.params, entity_id, event_day))[0].n


def generate(
    store: GraphStore,
    as_of: AsOf | int | str,
    source: str = "news",
    n: int = 50,
    seed: int = 0,
    llm: LLMClient | None = None,
    on_question: Callable[[], None] | None = None,
) -> Generation:
    """Up to `n` questions from the graph as of the day (an AsOf, yyyymmdd or ISO date), balanced over
    single-hop, 2-hop and false premise; `llm` rewords them when given."""
    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}, not {source!r}")
    as_of = AsOf.of(as_of)
    checker = Checker(store, as_of, source)
    rows = rows_of(FactRow, question_reads.facts(store, checker.params))
    rejected: Counter[str] = Counter()
    claims = claims_of(rows, rejected)
    checker.prefetch_partners((e.id, c.event_day) for c in claims for e in (c.subject, c.object) if e is not None)
    maskable = masked_claims(claims, checker, rejected)
    chains = two_hop_chains(maskable)
    popularity = window_counts(store.conn, 0, as_of.day, as_of.day if as_of.knowledge == "ingested" else LATEST_DAY)
    writer = Writer(as_of, source, checker, popularity, random.Random(seed))
    questions = select(writer, maskable, chains, n, random.Random(seed), rejected, on_question)
    if llm is not None:
        questions = [reworded(llm, q, checker, rejected) for q in questions]
    return Generation(questions, rejected, len(rows), len(claims), len(maskable), len(chains))


# --- Factual scaffold -------------------------------------------------------------------------------------------
def claims_of(rows: Iterable[FactRow], rejected: Counter[str]) -> list[Claim]:
    """The keypoints that one of their passages supports, grouped into claims by (subject, object, day); a clause
    without an object is a claim of its own."""
    claims: dict[tuple[str, str, int, str], Claim] = {}
    for row in rows:
        keypoint = keypoint_of(row, rejected)
        if keypoint is None:
            continue
        subject = Entity(row.subject_id, row.subject_name, row.subject_type)
        obj = Entity(row.object_id, row.object_name or "", row.object_type) if row.object_id else None
        key = (subject.id, obj.id if obj else "", row.event_day, "" if obj else row.id)
        claim = claims.setdefault(key, Claim(subject, obj, row.event_day))
        claim.keypoints.append(keypoint)
        claim.texts.append(row.text or "")
    return [claims[k] for k in sorted(claims)]


def keypoint_of(row: FactRow, rejected: Counter[str]) -> Keypoint | None:
    text = (row.text or "").strip()
    if not text:
        rejected["keypoint_without_text"] += 1
        return None
    supported: list[str] = []
    articles: set[str] = set()
    reasons: Counter[str] = Counter()
    for (chunk_id, chunk_text), article_ids in zip(row.chunks, row.articles, strict=True):
        names = [row.subject_name] + ([row.object_name] if row.object_name else [])
        reason = rules.passage_rejection(names, text, chunk_text or "")
        if reason is None and chunk_id:
            supported.append(chunk_id)
            articles.update(article_ids)
        else:
            reasons[reason or "passage_empty"] += 1
    if not supported:
        rejected[f"keypoint_{min(reasons, key=lambda r: (-reasons[r], r))}"] += 1
        return None
    return Keypoint(
        text=decontextualised(text, row.event_day),
        interaction_id=row.id,
        subject_id=row.subject_id,
        object_id=row.object_id,
        event_day=row.event_day,
        chunk_ids=sorted(supported),
        article_ids=sorted(articles),
    )


def decontextualised(text: str, event_day: int) -> str:
    """The interaction's words with its day written out, so the keypoint reads without its article."""
    when = day_words(event_day)
    return text if when in text else f"{text.rstrip('.')} (on {when})."


# --- Algorithmic scaffold ---------------------------------------------------------------------------------------
def masked_claims(claims: list[Claim], checker: Checker, rejected: Counter[str]) -> list[Masked]:
    """The claims' maskable nodes: both entities of an interaction, the subject of a clause without an object."""
    found: list[Masked] = []
    for claim in claims:
        date = rules.Node(day_words(claim.event_day), None)
        entities: dict[Role, Entity | None] = {"subject": claim.subject, "object": claim.object}
        for role, known_role in MASK_ORDER:
            masked, known = entities[role], entities[known_role]
            if masked is None:
                continue
            others = [rules.Node(known.name, known.type), date] if known else [date]
            candidate = Masked(claim, known, masked, role)
            reason = rules.mask_rejection(rules.Node(masked.name, masked.type), others, claim.texts)
            reason = reason or _cloze_rejection(candidate) or _unique_rejection(checker, candidate)
            if reason:
                rejected[reason] += 1
            else:
                found.append(candidate)
    return found


def _cloze_rejection(m: Masked) -> str | None:
    """The question is a cloze of a keypoint: one must name both entities, the masked one not inside a longer
    name (non-overlapping against the keypoint's arguments)."""
    if m.text is not None:
        return None
    if any(rules.embedded_in_longer_name(m.masked.name, t) for t in m.claim.texts):
        return "mask_overlaps_other_node"
    return "mask_known_not_in_keypoint"


def clause_around(text: str, name: str) -> tuple[str, str] | None:
    """The clause's words before and after the first mention of `name` (as the text writes it)."""
    at = text.lower().find(name.lower())
    return None if at < 0 else (text[:at], text[at + len(name) :])


def _unique_rejection(checker: Checker, m: Masked) -> str | None:
    """Non-exclusive (A.1), counted by Cypher as of the day: the masked entity is the only one with a reported
    interaction with the known one that day (the cloze only narrows that), or, for a clause without an object,
    the only entity whose clause that day reads the same around it; and the two are told apart by name."""
    known, masked, event_day = m.known, m.masked, m.claim.event_day
    if known is None:
        around = clause_around(m.text or "", masked.name)
        subjects = checker.clause_subjects(*around, event_day) if around else []
        return None if [s.id for s in subjects] == [masked.id] else "mask_not_unique"
    partner = checker.unique_partner(known.id, event_day)
    if partner is None or partner.id != masked.id:
        return "mask_not_unique"
    if known.name.strip().lower() == masked.name.strip().lower():
        return "mask_same_name_as_known"
    return None


def two_hop_chains(maskable: list[Masked]) -> list[Base]:
    """Inner masks the bridge (known K, day d1); outer knows the bridge and masks the answer (another day or
    claim): "which X had an interaction on d2 with the Y that had one with K on d1?"."""
    by_known: dict[str, list[Masked]] = {}
    for m in maskable:
        if m.known is not None:
            by_known.setdefault(m.known.id, []).append(m)
    chains: list[Base] = []
    for inner in maskable:
        if inner.known is None:  # the template names the inner question's known entity
            continue
        for outer in by_known.get(inner.masked.id, []):
            if outer.claim is inner.claim or outer.masked.id in (inner.known.id, inner.masked.id):
                continue
            chains.append(Base(inner, outer))
    return chains


# --- Wording ----------------------------------------------------------------------------------------------------
def kind_of(entity: Entity) -> str:
    kind = (entity.type or "").lower()
    return "place" if kind in PLACES else KINDS.get(kind, "entity")


@dataclass(frozen=True)
class Cloze:
    text: str
    keep: list[str]  # the phrases a rewording must keep as written (from `cloze`: the numbers)


def cloze(text: str, names: dict[str, str], event_day: int, when: str, spelled: bool) -> Cloze:
    """A keypoint's words with each name of `names` replaced by its phrase (case-insensitive, longer names
    first; the masked one named again reads "the same <kind>"), its day ("on March 1, 2031", or appended when the
    keypoint does not write it) replaced by `when`, and, when `spelled`, every number of the remaining words spelled
    out. Ends with a question mark."""
    body = " ".join(text.split()).rstrip(" .!?;:,")
    by_lower = {name.lower(): phrase for name, phrase in names.items()}
    day = day_words(event_day)
    alternatives = [re.escape(n) for n in sorted(names, key=len, reverse=True)] + [rf"(?:\bon )?{re.escape(day)}"]
    pieces: list[str] = []
    numbers: list[str] = []
    dated, at, asked = False, 0, set[str]()
    for found in re.finditer("|".join(alternatives), body, re.IGNORECASE):
        words = body[at : found.start()]
        numbers += _kept_numbers(words, spelled)
        pieces.append(rules.spelled_numbers(words) if spelled else words)
        phrase = by_lower.get(found.group(0).lower())
        if phrase is not None and phrase.startswith("which ") and phrase in asked:  # named again: the same one
            phrase = "the same " + phrase.removeprefix("which ")
        asked.add(phrase or "")
        dated = dated or phrase is None
        pieces.append(when if phrase is None else phrase)
        at = found.end()
    rest = body[at:]
    numbers += _kept_numbers(rest, spelled)
    pieces.append(rules.spelled_numbers(rest) if spelled else rest)
    question = "".join(pieces) + ("" if dated else f" {when}")
    return Cloze(question + "?", numbers)


def _kept_numbers(words: str, spelled: bool) -> list[str]:
    if spelled:
        return [rules.spelled_number_text(n) for n in rules.numbers_in(words, standalone=True)]
    return rules.numbers_in(words)


def question_id(as_of: int, question: str, answer: str) -> str:
    return "irb-" + hashlib.sha256(f"{as_of}|{question}|{answer}".encode()).hexdigest()[:16]


class Writer:
    """Turns a base question and a variant into an IRBQuestion, or the reason it cannot."""

    def __init__(
        self, as_of: AsOf, source: str, checker: Checker, popularity: dict[str, int], rng: random.Random
    ) -> None:
        self.as_of, self.source, self.checker, self.popularity, self.rng = as_of, source, checker, popularity, rng
        self.reference = f"As of {day_words(as_of.day)}, "

    def when(self, event_day: int, variant: Variant) -> str:
        if variant in ("relative_date", "spelled_number"):
            return rules.relative_date(rules.days_ago(event_day, self.as_of.day), spelled=variant == "spelled_number")
        return f"on {day_words(event_day)}"

    def known_name(self, known: Entity | None, variant: Variant) -> str | None:
        if known is None:
            return None
        if variant != "short_name":
            return known.name
        return rules.short_name(known.name) if rules.is_person(known.type) else None

    def write(self, base: Base, variant: Variant) -> IRBQuestion | str:
        if base.outer is None:
            return self._single(base.inner, variant)
        return self._two_hop(base.inner, base.outer, variant)

    def ask(self, m: Masked, known_as: str | None, when: str, spelled: bool = False) -> Cloze | str:
        """The keypoint as a question: the masked entity asked for, the known one as `known_as`, the day as `when`
        and every other word (predicate, arguments, numbers) kept."""
        if m.text is None:
            return "mask_known_not_in_keypoint"
        names = {m.masked.name: f"which {kind_of(m.masked)}"}
        if m.known is not None and known_as is not None:
            names[m.known.name] = known_as
        made = cloze(m.text, names, m.claim.event_day, when, spelled)
        return Cloze(self.reference + made.text, [k for k in (known_as, when, *made.keep) if k])

    def _single(self, m: Masked, variant: Variant) -> IRBQuestion | str:
        day = m.claim.event_day
        if variant == "false_name":
            return self._false_name(m)
        if variant == "false_date":
            return self._false_date(m)
        known = self.known_name(m.known, variant)
        if (m.known is not None and known is None) or (m.known is None and variant == "short_name"):
            return NOT_APPLICABLE
        asked = self.ask(m, known, self.when(day, variant), spelled=variant == "spelled_number")
        if isinstance(asked, str):
            return asked
        return self._record(asked.text, Base(m), _paraphrase(variant), keep=asked.keep)

    def _two_hop(self, inner: Masked, outer: Masked, variant: Variant) -> IRBQuestion | str:
        known = self.known_name(inner.known, variant)
        if known is None:
            return NOT_APPLICABLE
        when_inner = self.when(inner.claim.event_day, variant)
        when_outer = self.when(outer.claim.event_day, variant)
        text = TWO_HOP.format(
            lead=self.reference,
            kind=kind_of(outer.masked),
            when_outer=when_outer,
            bridge_kind=kind_of(inner.masked),
            known=known,
            when_inner=when_inner,
        )
        return self._record(text, Base(inner, outer), _paraphrase(variant), keep=[known, when_inner, when_outer])

    def _false_name(self, m: Masked) -> IRBQuestion | str:
        if m.known is None or not rules.is_person(m.known.type):
            return NOT_APPLICABLE
        fake = rules.swapped_surname(m.known.name, self.rng)
        if fake is None:
            return NOT_APPLICABLE
        if self.checker.name_on_day(fake, m.claim.event_day):
            return "premise_not_false"
        when = f"on {day_words(m.claim.event_day)}"
        asked = self.ask(m, fake, when)
        if isinstance(asked, str):
            return asked
        premise = f"someone named {fake} had a reported interaction {when}"
        false = FalsePremise(premise, m.known.name, _aliases(m.known), name=fake)
        return self._record(asked.text, Base(m), "short_name", keep=asked.keep, false=false)

    def _false_date(self, m: Masked) -> IRBQuestion | str:
        if m.known is None:  # the premise re-check counts the known entity's interactions on the distorted day
            return NOT_APPLICABLE
        true_days = rules.days_ago(m.claim.event_day, self.as_of.day)
        fake_days = rules.distorted_days(true_days, self.rng)
        fake_day = _shift_back(self.as_of.day, fake_days)
        if self.checker.entity_on_day(m.known.id, fake_day):
            return "premise_not_false"
        when = rules.relative_date(fake_days)
        asked = self.ask(m, m.known.name, when)
        if isinstance(asked, str):
            return asked
        premise = f"{m.known.name} had a reported interaction {when}"
        true_day = m.claim.event_day
        aliases = [day_iso(true_day), rules.relative_date(true_days)]
        false = FalsePremise(premise, day_words(true_day), aliases, day=fake_day)
        return self._record(asked.text, Base(m), "relative_date", keep=asked.keep, false=false)

    def _record(
        self,
        text: str,
        base: Base,
        paraphrase: Paraphrase,
        keep: list[str],
        false: FalsePremise | None = None,
    ) -> IRBQuestion | str:
        target = base.answer
        answer = (false.answer if false else None) or target.name
        aliases = false.aliases if false else _aliases(target)
        false_premise = false.premise if false else None
        if leaks(text, answer, aliases if false_premise is None else []):
            return "answer_in_question"
        keypoints = [m.claim.keypoints for m in (base.inner, base.outer) if m is not None]
        flat = [k for group in keypoints for k in group]
        return IRBQuestion(
            id=question_id(self.as_of.day, text, answer),
            question=text,
            answer=answer,
            aliases=aliases,
            expected="reject_premise" if false_premise else "answer",
            false_premise=false_premise,
            as_of=self.as_of.day,
            hops=2 if base.outer else 1,
            premise="false" if false_premise else "valid",
            paraphrase=paraphrase,
            popularity=self.popularity.get(target.id, 0),
            masked=MaskedNode(entity_id=target.id, name=target.name, role=(base.outer or base.inner).role),
            bridge=(
                MaskedNode(entity_id=base.inner.masked.id, name=base.inner.masked.name, role=base.inner.role)
                if base.outer
                else None
            ),
            keypoints=flat,
            qrels={a: 1 for k in flat for a in k.article_ids},
            source=_source(self.source),
            keep=keep,
            false_name=false.name if false else None,
            false_day=false.day if false else None,
        )


def _paraphrase(variant: Variant) -> Paraphrase:
    return "none" if variant in ("none", "false_name", "false_date") else variant


def _source(source: str) -> Source:
    return "neoqa" if source == "neoqa" else "news"


def _aliases(entity: Entity) -> list[str]:
    short = rules.short_name(entity.name) if rules.is_person(entity.type) else None
    return [short] if short else []


def _shift_back(day: int, days: int) -> int:
    return shift_day(day, -days)


def leaks(question: str, answer: str, aliases: list[str]) -> bool:
    """The answer (or an alias of it) written in the question gives it away."""
    lowered = question.lower()
    return any(a and a.lower() in lowered for a in [answer, *aliases])


# --- Selection --------------------------------------------------------------------------------------------------
def select(
    writer: Writer,
    maskable: list[Masked],
    chains: list[Base],
    n: int,
    rng: random.Random,
    rejected: Counter[str],
    on_question: Callable[[], None] | None = None,
) -> list[IRBQuestion]:
    """Round-robin over single-hop, 2-hop and false-premise candidates, each list shuffled by the seed.

    Every (candidate, variant) pair is built and shuffled before N are drawn, on purpose: a lazy draw cannot give
    the same order, since `rng.shuffle` (Fisher-Yates from the end) fixes the front of a list last, so drawing
    lazily would change the questions written for every seed. Eager costs little next to the Cypher checks: the
    100k-interaction bench graph (bench/irb.py: 186,996 maskable, 686,423 2-hop chains) gives 3.9 M pairs,
    built and shuffled in 3.3 s of CPU and ~250 MB."""
    single: list[tuple[Base, Variant]] = [
        (Base(m), v) for m in maskable for v in SINGLE_VARIANTS if not v.startswith("false")
    ]
    false: list[tuple[Base, Variant]] = [
        (Base(m), v) for m in maskable for v in SINGLE_VARIANTS if v.startswith("false")
    ]
    double: list[tuple[Base, Variant]] = [(b, v) for b in chains for v in TWO_HOP_VARIANTS]
    buckets = [single, double, false]
    for bucket in buckets:
        rng.shuffle(bucket)
    chosen: list[IRBQuestion] = []
    seen: set[str] = set()
    while len(chosen) < n and any(buckets):
        for bucket in buckets:
            if len(chosen) >= n:
                break
            made = _next_applicable(writer, bucket)
            if made is None:
                continue
            if isinstance(made, str):
                rejected[made] += 1
            elif made.id not in seen:
                seen.add(made.id)
                chosen.append(made)
                if on_question:
                    on_question()
    return chosen


def _next_applicable(writer: Writer, bucket: list[tuple[Base, Variant]]) -> IRBQuestion | str | None:
    """The bucket's next candidate a variant applies to (no short name for an organisation, no false premise
    for a clause without an object: not rejections), so each kind keeps its turn in the round-robin."""
    while bucket:
        base, variant = bucket.pop(0)
        made = writer.write(base, variant)
        if made != NOT_APPLICABLE:
            return made
    return None


# --- LLM rewording ----------------------------------------------------------------------------------------------
def reworded(llm: LLMClient, question: IRBQuestion, checker: Checker, rejected: Counter[str]) -> IRBQuestion:
    """The LLM's wording when it keeps the phrases, leaks nothing and the graph checks still pass; else the
    template's (counted)."""
    reply = llm.complete(rewrite.build(question.question, question.keep))
    if reply is None:
        rejected["llm_unparsed"] += 1
        return question
    text = " ".join(reply.question.split())
    if not all(k.lower() in text.lower() for k in question.keep):
        rejected["llm_dropped_kept_phrase"] += 1
        return question
    if leaks(text, question.answer, question.aliases if question.premise == "valid" else []):
        rejected["llm_leaked_answer"] += 1
        return question
    if not (answer_holds(checker, question) and premise_holds(checker, question)):
        rejected["llm_check_failed"] += 1
        return question
    return question.model_copy(
        update={"question": text, "wording": "llm", "id": question_id(question.as_of, text, question.answer)}
    )


# --- Re-checks (the tests and the LLM path) ---------------------------------------------------------------------
def known_of(keypoint: Keypoint, masked_role: str) -> str:
    return (keypoint.subject_id if masked_role == "object" else keypoint.object_id) or ""


def reproduce_answer(checker: Checker, question: IRBQuestion) -> list[str]:
    """The entities the question's relation chain leads to, recomputed by Cypher as of its day."""
    if question.hops == 1:
        first = question.keypoints[0]
        if first.object_id is None:  # a clause without an object: who else's clause reads the same that day
            around = clause_around(checker.interaction_text(first.interaction_id), question.masked.name)
            return [p.name for p in checker.clause_subjects(*around, first.event_day)] if around else []
        return [p.name for p in checker.partners(known_of(first, question.masked.role), first.event_day)]
    bridge, masked = question.bridge, question.masked.entity_id
    if bridge is None:
        return []
    inner = next(k for k in question.keypoints if bridge.entity_id in _ends(k) and masked not in _ends(k))
    bridges = checker.partners(known_of(inner, bridge.role), inner.event_day)
    outer = next(k for k in question.keypoints if masked in _ends(k))
    return [p.name for b in bridges for p in checker.partners(b.id, outer.event_day)]


def _ends(keypoint: Keypoint) -> tuple[str, str]:
    return keypoint.subject_id, keypoint.object_id or ""


def answer_holds(checker: Checker, question: IRBQuestion) -> bool:
    return reproduce_answer(checker, question) == [question.masked.name]


def premise_holds(checker: Checker, question: IRBQuestion) -> bool:
    """Valid premise: nothing to check. False premise: the graph has nothing that makes it true as of the day."""
    if question.premise == "valid":
        return True
    day = question.keypoints[0].event_day
    if question.false_name:
        return checker.name_on_day(question.false_name, day) == 0
    known = known_of(question.keypoints[0], question.masked.role)
    return question.false_day is not None and checker.entity_on_day(known, question.false_day) == 0


def save(questions: list[IRBQuestion], path: Path) -> None:
    """JSONL, one question a line, in selection order: the same seed writes the same bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(q.model_dump_json() + "\n" for q in questions), encoding="utf-8")


def load(path: Path) -> list[IRBQuestion]:
    return [IRBQuestion.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
