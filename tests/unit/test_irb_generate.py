"""IRB generation, the pure parts: each masking rule rejects its counter-example, the paraphrase and false-premise
rules, the keypoint-passage check, selection determinism, and the LLM rewording kept only when its checks pass
(scripted replies through the real client). The graph checks themselves run on FalkorDB in
tests/integration/test_irb_generate.py."""

import json
import random
from collections import Counter

from newskg.evaluation.irb import rules
from newskg.evaluation.irb.generate import (
    Base,
    Checker,
    Claim,
    Entity,
    Masked,
    PartnerRow,
    Writer,
    masked_claims,
    reworded,
    save,
    select,
    two_hop_chains,
)
from newskg.evaluation.irb.records import Keypoint
from newskg.graph.store.asof import AsOf
from tests.unit.test_llm_extraction import Script, client

AS_OF = 20310320
ADA = Entity("e_ada", "Ada Lovelace", "person")
ACME = Entity("e_acme", "Acme Corp", "organization")
BOB = Entity("e_bob", "Bob Stone", "person")


class StubChecker(Checker):
    """The graph's answers for the rule logic (the Cypher behind them is tested on FalkorDB)."""

    def __init__(self, partners: dict[tuple[str, int], list[Entity]], busy_names=(), busy_days=(), clauses=()) -> None:
        self._given = partners
        self.busy_names, self.busy_days = set(busy_names), set(busy_days)
        self.clauses: list[tuple[Entity, int, str]] = list(clauses)  # (subject, day, text) of clauses without object

    def partners(self, entity_id, event_day):
        return [PartnerRow(e.id, e.name) for e in self._given.get((entity_id, event_day), [])]

    def clause_subjects(self, prefix, suffix, event_day):
        return [
            PartnerRow(e.id, e.name)
            for e, day, text in self.clauses
            if day == event_day and text.startswith(prefix) and text.endswith(suffix)
        ]

    def name_on_day(self, fake_name, event_day):
        return int(fake_name in self.busy_names)

    def entity_on_day(self, entity_id, event_day):
        return int(event_day in self.busy_days)


def keypoint(subject: Entity, obj: Entity, day: int, text: str) -> Keypoint:
    return Keypoint(
        text=text,
        interaction_id=f"x-{subject.id}-{obj.id}-{day}",
        subject_id=subject.id,
        object_id=obj.id,
        event_day=day,
        chunk_ids=[f"c-{day}"],
        article_ids=[f"a-{day}"],
    )


def claim(subject: Entity, obj: Entity, day: int, text: str | None = None) -> Claim:
    text = text or f"{subject.name} signed a deal with {obj.name}."
    return Claim(subject, obj, day, [keypoint(subject, obj, day, text)], [text])


def clause(subject: Entity, day: int, text: str) -> Claim:
    """A clause of the subject's without an object (M0's subject-centric facts)."""
    kp = keypoint(subject, subject, day, text).model_copy(update={"object_id": None})
    return Claim(subject, None, day, [kp], [text])


# --- Masking rules (Appendix A.1): each one rejects its counter-example -----------------------------------------
def test_a_node_that_is_not_a_named_entity_is_not_masked():
    assert rules.mask_rejection(rules.Node("March 5, 2031", None), [], ["March 5, 2031"]) == "mask_not_named_entity"
    assert rules.mask_rejection(rules.Node("the board", "organization"), [], ["the board"]) == "mask_not_named_entity"
    assert rules.mask_rejection(rules.Node("Acme Corp", "organization"), [], ["Acme Corp won."]) is None


def test_a_node_missing_from_one_keypoint_is_not_masked():
    node = rules.Node("Acme Corp", "organization")
    keypoints = ["Acme Corp signed with Ada Lovelace.", "Ada Lovelace signed a deal."]
    assert rules.mask_rejection(node, [], keypoints) == "mask_not_in_every_keypoint"
    assert rules.mask_rejection(node, [], keypoints[:1]) is None


def test_a_node_naming_several_entities_is_not_masked():
    for text in ("Smith and Jones", "Marks & Spencer", "Ada Lovelace et al"):
        assert rules.mask_rejection(rules.Node(text, "organization"), [], [f"{text} won."]) == "mask_not_atomic"


def test_a_node_contained_in_another_node_is_not_masked():
    paris = rules.Node("Paris", "gpe")
    psg = rules.Node("Paris Saint-Germain", "organization")
    assert rules.mask_rejection(paris, [psg], ["Paris Saint-Germain met Paris."]) == "mask_overlaps_other_node"
    assert rules.mask_rejection(psg, [paris], ["Paris Saint-Germain met Paris."]) is None


def test_a_node_written_inside_a_longer_name_is_not_masked():
    """Non-overlapping against the keypoint's arguments: masking "Apple" in "Apple Music" would leave "Music"."""
    day = 20310301
    apple = Entity("e_apple", "Apple", "organization")
    checker = StubChecker({(ADA.id, day): [apple], (apple.id, day): [ADA]})
    rejected: Counter[str] = Counter()
    embedded = claim(ADA, apple, day, "Ada Lovelace praised Apple Music subscribers and Apple.")
    assert [m.masked.id for m in masked_claims([embedded], checker, rejected)] == [ADA.id]  # Ada can be asked
    assert rejected == Counter({"mask_overlaps_other_node": 1})
    assert rules.embedded_in_longer_name("Apple", "Ada Lovelace praised Apple Music subscribers.")
    assert not rules.embedded_in_longer_name("Apple", "Ada Lovelace praised Apple's music and The Apple.")
    plain = claim(ADA, apple, day, "Ada Lovelace praised Apple.")
    assert [m.masked.id for m in masked_claims([plain], checker, Counter())] == [apple.id, ADA.id]


def test_a_keypoint_that_does_not_name_the_known_entity_is_not_asked():
    day = 20310301
    checker = StubChecker({(ADA.id, day): [ACME], (ACME.id, day): [ADA]})
    rejected: Counter[str] = Counter()
    vague = claim(ADA, ACME, day, "Lovelace signed a deal with Acme Corp.")  # "which organization" alone: too broad
    assert masked_claims([vague], checker, rejected) == []
    assert rejected == Counter({"mask_known_not_in_keypoint": 1, "mask_not_in_every_keypoint": 1})


def test_a_node_that_is_not_the_unique_partner_is_not_masked():
    day = 20310301
    shared = StubChecker({(ADA.id, day): [ACME, BOB], (ACME.id, day): [ADA], (BOB.id, day): [ADA]})
    rejected: Counter[str] = Counter()
    found = masked_claims([claim(ADA, ACME, day)], shared, rejected)
    # Ada met both Acme and Bob that day: "who met Ada?" has two answers; "who met Acme?" has one (Ada).
    assert [(m.known and m.known.id, m.masked.id) for m in found] == [(ACME.id, ADA.id)]
    assert rejected == Counter({"mask_not_unique": 1})


def test_two_hop_chains_go_through_a_bridge():
    d1, d2 = 20310301, 20310310
    inner = Masked(claim(ADA, ACME, d1), ADA, ACME, "object")
    outer = Masked(claim(ACME, BOB, d2), ACME, BOB, "object")
    back = Masked(claim(ACME, ADA, d2), ACME, ADA, "object")  # would answer with the known entity: not a chain
    chains = two_hop_chains([inner, outer, back])
    assert [(b.inner.masked.id, b.outer and b.outer.masked.id) for b in chains] == [(ACME.id, BOB.id)]


# --- Keypoints against their passages ---------------------------------------------------------------------------
def test_a_keypoint_is_supported_only_by_a_passage_with_its_names_and_numbers():
    names = ["Ada Lovelace", "Acme Corp"]
    kp = "Ada Lovelace sold 2,500 shares to Acme Corp."
    assert rules.passage_rejection(names, kp, "Ada Lovelace sold 2,500 shares to Acme Corp on Monday.") is None
    assert rules.passage_rejection(names, kp, "Lovelace sold 2,500 shares to Acme Corp.") == "passage_missing_name"
    assert rules.passage_rejection(names, kp, "Ada Lovelace sold shares to Acme Corp.") == "passage_missing_number"
    assert rules.passage_rejection(names, kp, "  ") == "passage_empty"


# --- Paraphrase (Table 8) and false premise (Table 9) -----------------------------------------------------------
def test_paraphrase_rules():
    assert rules.short_name("Cristiano Ronaldo") == "C. Ronaldo"
    assert rules.short_name("Ada King Lovelace") == "A. K. Lovelace"
    assert rules.short_name("Madonna") is None
    assert rules.days_ago(20310301, AS_OF) == 19
    assert rules.relative_date(19) == "19 days ago" and rules.relative_date(1) == "1 day ago"
    assert rules.relative_date(0) == rules.relative_date(0, spelled=True) == "today"
    assert rules.relative_date(19, spelled=True) == "nineteen days ago"
    assert rules.spell_number(1234) == "one thousand two hundred thirty-four"
    assert rules.spell_number(2_000_015) == "two million fifteen"
    assert rules.spelled_numbers("cut 2,400 jobs, 3.5% of staff, at 60fps in Q3") == (
        "cut two thousand four hundred jobs, three point five% of staff, at 60fps in Q3"
    )


def test_false_premise_rules_change_the_node():
    rng = random.Random(0)
    for _ in range(50):
        fake = rules.swapped_surname("Cristiano Ronaldo", rng)
        assert fake and fake.startswith("C. ") and not fake.endswith("Ronaldo")
        for days in (0, 5, 300):
            distorted = rules.distorted_days(days, rng)
            assert distorted >= 1 and abs(distorted - days) >= 30
    assert rules.swapped_surname("Madonna", rng) is None


def _writer(checker: Checker, seed: int = 0) -> Writer:
    return Writer(AsOf(AS_OF), "neoqa", checker, {ACME.id: 7}, random.Random(seed))


def test_variants_record_their_attributes():
    day = 20310301
    m = Masked(claim(ADA, ACME, day), ADA, ACME, "object")
    writer = _writer(StubChecker({}))
    short = writer.write(Base(m), "short_name")
    assert not isinstance(short, str)
    assert "A. Lovelace" in short.question and short.paraphrase == "short_name" and short.popularity == 7
    assert short.answer == "Acme Corp" and short.qrels == {f"a-{day}": 1} and short.hops == 1
    spelled = writer.write(Base(m), "spelled_number")
    assert not isinstance(spelled, str) and "nineteen days ago" in spelled.question
    false = writer.write(Base(m), "false_name")
    assert not isinstance(false, str)
    assert false.premise == "false" and false.expected == "reject_premise" and false.answer == "Ada Lovelace"
    assert false.false_name and false.false_name in false.question and "Lovelace" not in false.question
    dated = writer.write(Base(m), "false_date")
    assert not isinstance(dated, str) and dated.false_day and dated.false_day != day
    assert dated.answer == "March 1, 2031"


def test_a_single_hop_question_is_a_cloze_of_its_keypoint_numbers_included():
    """The keypoint's predicate and arguments stay in the question, the masked entity becomes "which <kind>", and
    the spelled-number paraphrase spells the keypoint's own numbers as well as the day count."""
    day = 20310301
    sold = claim(ADA, ACME, day, "Ada Lovelace sold 2,500 shares to Acme Corp on March 1, 2031.")
    writer = _writer(StubChecker({}))
    asked = {}
    for m in (Masked(sold, ADA, ACME, "object"), Masked(sold, ACME, ADA, "subject")):
        for variant in ("none", "spelled_number", "relative_date"):
            made = writer.write(Base(m), variant)
            assert not isinstance(made, str)
            asked[m.role, variant] = made
    lead = "As of March 20, 2031, "
    assert (
        asked["object", "none"].question
        == lead + "Ada Lovelace sold 2,500 shares to which organization on March 1, 2031?"
    )
    assert asked["subject", "none"].question == lead + "which person sold 2,500 shares to Acme Corp on March 1, 2031?"
    spelled = asked["object", "spelled_number"]
    assert spelled.question == (
        lead + "Ada Lovelace sold two thousand five hundred shares to which organization nineteen days ago?"
    )
    assert spelled.paraphrase == "spelled_number" and "two thousand five hundred" in spelled.keep
    assert asked["subject", "relative_date"].question.endswith("to Acme Corp 19 days ago?")
    assert "2,500" in asked["subject", "relative_date"].keep
    again = Masked(claim(ADA, ACME, day, "Acme Corp said Ada Lovelace left Acme Corp."), ADA, ACME, "subject")
    made = writer.write(Base(again), "none")
    assert not isinstance(made, str)
    assert made.question == lead + "which organization said Ada Lovelace left the same organization on March 1, 2031?"


def test_a_clause_without_an_object_asks_for_its_subject_when_no_other_clause_reads_the_same():
    day = 20310301
    cut = clause(ACME, day, "Acme Corp laid off 2,400 workers.")
    alone = StubChecker({}, clauses=[(ACME, day, "Acme Corp laid off 2,400 workers.")])
    rejected: Counter[str] = Counter()
    [m] = masked_claims([cut], alone, rejected)
    assert (m.known, m.masked, m.role, rejected) == (None, ACME, "subject", Counter())
    made = _writer(alone).write(Base(m), "spelled_number")
    assert not isinstance(made, str) and made.answer == "Acme Corp" and made.keypoints[0].object_id is None
    assert (
        made.question
        == "As of March 20, 2031, which organization laid off two thousand four hundred workers nineteen days ago?"
    )
    for variant in ("short_name", "false_name", "false_date"):  # no known entity to paraphrase or perturb
        assert _writer(alone).write(Base(m), variant) == "variant_not_applicable"
    assert two_hop_chains([m]) == []
    # Another firm's clause that day reads the same around its name: "which organization ..." has two answers.
    bob_co = Entity("e_bob_co", "Bob Holdings", "organization")
    crowded = StubChecker({}, clauses=[*alone.clauses, (bob_co, day, "Bob Holdings laid off 2,400 workers.")])
    assert masked_claims([cut], crowded, rejected) == [] and rejected == Counter({"mask_not_unique": 1})


def test_a_false_premise_the_graph_makes_true_is_dropped():
    day = 20310301
    m = Masked(claim(ADA, ACME, day), ADA, ACME, "object")
    everyone = StubChecker({}, busy_names={f"A. {s}" for s in rules.SURNAMES}, busy_days=range(20300101, 20320101))
    writer = _writer(everyone)
    assert writer.write(Base(m), "false_name") == "premise_not_false"
    assert writer.write(Base(m), "false_date") == "premise_not_false"
    org = Masked(claim(ACME, BOB, day), ACME, BOB, "object")
    assert writer.write(Base(org), "false_name") == "variant_not_applicable"  # no surname to swap


def _selection(seed: int, tmp_path, name: str) -> bytes:
    d1, d2 = 20310301, 20310310
    masks = [
        Masked(claim(ADA, ACME, d1), ADA, ACME, "object"),
        Masked(claim(ACME, BOB, d2), ACME, BOB, "object"),
        Masked(claim(BOB, ADA, d1), BOB, ADA, "object"),
    ]
    partners = {(ADA.id, d1): [ACME], (ACME.id, d2): [BOB], (BOB.id, d1): [ADA]}
    checker = StubChecker(partners)
    rejected: Counter[str] = Counter()
    questions = select(_writer(checker, seed), masks, two_hop_chains(masks), 12, random.Random(seed), rejected)
    path = tmp_path / name
    save(questions, path)
    return path.read_bytes()


def test_same_seed_same_bytes(tmp_path):
    first = _selection(3, tmp_path, "a.jsonl")
    assert first == _selection(3, tmp_path, "b.jsonl")
    assert first != _selection(4, tmp_path, "c.jsonl")
    lines = [json.loads(line) for line in first.decode().splitlines()]
    assert (
        len(lines) == 12
        and {q["hops"] for q in lines} == {1, 2}
        and {q["premise"] for q in lines}
        == {
            "valid",
            "false",
        }
    )


def test_each_kind_keeps_its_turn_when_variants_do_not_apply():
    """Clauses without an object have no false-premise variant; the false-premise turn goes to the next candidate
    it applies to instead of being lost, so a mostly-clause graph still yields false-premise questions."""
    d1 = 20310301
    firms = [Entity(f"e_firm{i}", f"Firm{i} Holdings", "organization") for i in range(60)]
    masks = [
        Masked(clause(f, d1, f"{f.name} laid off {i + 2} workers."), None, f, "subject") for i, f in enumerate(firms)
    ]
    masks.append(Masked(claim(ADA, ACME, d1), ADA, ACME, "object"))
    questions = select(_writer(StubChecker({}), 0), masks, [], 3, random.Random(0), Counter())
    assert len(questions) == 3 and {q.premise for q in questions} == {"valid", "false"}


# --- LLM rewording ----------------------------------------------------------------------------------------------
def _question():
    day = 20310301
    m = Masked(claim(ADA, ACME, day), ADA, ACME, "object")
    checker = StubChecker({(ADA.id, day): [ACME]})
    made = _writer(checker).write(Base(m), "short_name")
    assert not isinstance(made, str)
    return made, checker


def _reply(text: str) -> tuple[int, str]:
    return 200, json.dumps({"question": text})


def test_a_rewrite_is_kept_only_when_its_checks_pass():
    q, checker = _question()
    rejected: Counter[str] = Counter()
    good = "As of March 20, 2031, which organization did A. Lovelace deal with on March 1, 2031?"
    replies = [
        _reply("Which organization, Acme Corp perhaps, did A. Lovelace meet on March 1, 2031?"),  # leaks
        _reply("Which organization did Ada Lovelace meet on March 1, 2031?"),  # drops the short name
        (200, "not json at all"),
        (200, "still not json"),
        _reply(good),
    ]
    llm = client(Script(*replies))
    assert reworded(llm, q, checker, rejected) == q
    assert reworded(llm, q, checker, rejected) == q
    assert reworded(llm, q, checker, rejected) == q
    kept = reworded(llm, q, checker, rejected)
    assert kept.question == good and kept.wording == "llm" and kept.id != q.id and kept.answer == q.answer
    assert rejected == Counter({"llm_leaked_answer": 1, "llm_dropped_kept_phrase": 1, "llm_unparsed": 1})


def test_a_rewrite_is_dropped_when_the_graph_no_longer_confirms_the_answer():
    q, _ = _question()
    rejected: Counter[str] = Counter()
    crowded = StubChecker({(ADA.id, 20310301): [ACME, BOB]})
    llm = client(Script(_reply("As of March 20, 2031, which organization met A. Lovelace on March 1, 2031?")))
    assert reworded(llm, q, crowded, rejected) == q
    assert rejected == Counter({"llm_check_failed": 1})
