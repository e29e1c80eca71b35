"""M0 facts of the party that acted (extract/openie/offline.py, clauses.py, extract/entities/mentions.py): an
organisation named inside a prepositional modifier of the subject ("Officers from X arrested …") is the acting
party of the clause; each conjoined verb ("stopped a van … and later arrested the driver …") is its own clause;
a trailing attribution ("…, said Capt. Y") makes the speaker the source of the reported clause, not its subject;
and a name the model split is widened to the end of its proper-noun run, never cut inside it."""

from newskg.extract.entities.mentions import find_mentions
from newskg.extract.nlp import pipeline
from tests.unit.test_offline_clauses import facts


def test_an_organisation_in_a_modifier_of_the_subject_acts_on_the_object():
    found = facts("Officers from the Dayton Fire Department rescued Maria Lopez from the river on Tuesday.")
    relations = [(name, text, obj) for name, text, obj, _ in found if obj is not None]
    assert (
        "Dayton Fire Department",
        "Officers from Dayton Fire Department rescued Maria Lopez from the river on Tuesday",
        "Maria Lopez",
    ) in relations  # the entity-to-entity fact the old code never made (the department was no subject)


def test_each_conjoined_verb_of_the_acting_party_is_its_own_clause():
    found = facts(
        "Officers from the Dayton Police Department stopped a van near the bridge and later arrested the driver "
        "after finding heroin in the trunk."
    )
    texts = [text for name, text, obj, _ in found if name == "Dayton Police Department" and obj is None]
    assert "Officers from Dayton Police Department stopped a van near the bridge" in texts
    assert "Officers from Dayton Police Department later arrested the driver after finding heroin in the trunk" in texts


def test_a_trailing_attribution_makes_the_speaker_the_source_not_the_subject():
    """The reported clause's fact keeps who said it (rule "reported"): it is the spokeswoman's statement."""
    found = facts(
        "Investigators with the Tulsa Fire Department found gasoline in the garage, said Capt. Dana Reyes, a "
        "department spokeswoman."
    )
    about = {name: [text for n, text, obj, _ in found if n == name and obj is None] for name, _, _, _ in found}
    said = "Dana Reyes said investigators with the Tulsa Fire Department found gasoline in the garage"
    assert said in about["Tulsa Fire Department"]
    # the speaker's fact says who said it, the reported clause after the verb (it read "Dana Reyes Investigators
    # with Tulsa Fire Department found gasoline in garage said")
    assert all(text.startswith("Dana Reyes said ") for text in about.get("Dana Reyes", []))


def test_a_speaker_before_the_reported_clause_keeps_it():
    """ "X said Y": the speaker's own words stay the speaker's fact (what a question about X needs)."""
    found = facts("Kristi Noem said the campaign against meth had worked in South Dakota.")
    texts = [text for name, text, obj, _ in found if name == "Kristi Noem" and obj is None]
    assert texts and all("campaign against meth" in text for text in texts)


def test_a_widened_name_is_not_cut_inside_a_longer_proper_noun_run():
    """The model's span ends at "Department"; widening over the split-off next word stopped inside the unit's name
    ("the Dayton Police Department Intelligence"), a name no one uses."""
    doc = pipeline()("Detectives from the Dayton Police Department Intelligence Led Policing Unit seized heroin.")
    names = [m.text for m in find_mentions(doc)]
    assert "the Dayton Police Department Intelligence" not in names
    assert "the Dayton Police Department Intelligence Led Policing Unit" in names


def test_a_hyphenated_word_stays_whole_in_a_clause():
    """The parse keeps a hyphenated word's head only ("time high", "front runner"): the fact lost the story's own
    word."""
    texts = [text for _, text, _, _ in facts("The benchmark Nasdaq index hit a new all-time high on Monday.")]
    assert any("new all-time high" in text for text in texts)
    texts = [text for _, text, _, _ in facts("Doja Cat signed a long-term deal with a Los Angeles-based label.")]
    assert "Doja Cat signed a long-term deal with a Los Angeles-based label" in texts


def test_a_kept_noun_keeps_its_conjuncts_at_any_depth():
    """Coordination is one argument: the deepest kept noun keeps the nouns conjoined with it ("as its new president
    and CEO"), where the depth limit used to cut the second."""
    found = facts("The board is pleased to welcome Dana Cole as its new president and CEO.")
    texts = [text for name, text, _, _ in found if name == "Dana Cole"]
    assert texts and all("president and CEO" in text for text in texts)
