"""M0's subject-centric clause facts (extract/openie/clauses.py): the story's own words reach a fact about the
entity even when no second entity is in the sentence; no verb, no fact; deduplicated and capped per chunk."""

from extract.chunk_extractor import ChunkExtractor
from extract.entities.alias_index import AliasIndex
from extract.entities.linker import Linker
from extract.openie import clauses
from tests.unit.test_linking_offline import PASSAGE, chunk


def facts(text: str) -> list[tuple[str, str, str | None, int]]:
    (result,) = ChunkExtractor(Linker(AliasIndex())).offline([chunk(text)])
    return [(i.subject_name, i.text, i.object_name, i.event_day) for i in result.interactions]


def test_a_subject_clause_keeps_the_verb_and_its_arguments_without_a_second_entity():
    found = facts("Google laid off 2,400 employees on Monday as part of a broad restructuring.")
    assert ("Google", "Google laid off 2,400 employees on Monday as part of broad restructuring", None, 20230501) in (
        found
    )  # dated by the day the sentence states, like the entity-to-entity facts


def test_a_salient_mention_gives_the_main_clause_about_the_entity():
    found = facts("An outbreak of plague was confirmed in Inner Mongolia on Sunday.")
    assert ("Inner Mongolia", "outbreak of plague was confirmed in Inner Mongolia on Sunday", None, 20230430) in found


def test_clauses_come_beside_the_entity_to_entity_facts_and_keep_possessives():
    found = facts(PASSAGE)
    assert ("Doja Cat", "Doja Cat thanked Karl Lagerfeld's estate", "Karl Lagerfeld", 20230503) in found
    assert ("Doja Cat", "Doja Cat thanked Karl Lagerfeld's estate in statement on May 3 2023", None, 20230503) in found
    assert ("Anna Wintour", "Anna Wintour praised theme", None, 20230503) in found
    assert len({text.lower() for _, text, _, _ in found}) == len(found)  # no text twice


def test_a_bare_verb_or_a_verbless_sentence_gives_no_clause():
    assert facts("Amala Dlamini arrived. Doja Cat smiled.") == []
    assert facts("Inner Mongolia, Sunday: a photo of the hospital.") == []


def test_clauses_are_capped_per_chunk(monkeypatch):
    monkeypatch.setattr(clauses, "MAX_CLAUSES_PER_CHUNK", 2)
    found = facts(PASSAGE)
    assert sum(obj is None for _, _, obj, _ in found) == 2


def test_an_effort_keeps_what_it_is_to_do_and_an_attribution_is_no_argument():
    """A noun's clausal modifier ("an effort to address the meth crisis") is the story; "according to a report in
    X" only says who reported it (it ate the clause's words and kept "report in")."""
    found = facts(
        "According to a report in the Argus Leader, Kristi Noem launched the campaign on Monday in an effort to "
        "address the state's meth crisis."
    )
    texts = [text for name, text, obj, _ in found if name == "Kristi Noem" and obj is None]
    assert texts == ["Kristi Noem launched campaign on Monday in effort to address state's meth crisis"]


def test_a_salient_mention_keeps_its_appositive_and_the_noun_it_names():
    """The fact about a mention says what the sentence says the mention is, inside the clause or (when the trimmed
    clause leaves the mention out) before it."""
    found = facts(
        "Sharing my full letter on the sentencing of Patrick Carlineo, a man convicted of threatening my life."
    )
    assert (
        "Patrick Carlineo",
        "Sharing my full letter on sentencing of Patrick Carlineo man convicted of threatening my life",
        None,
        20230505,
    ) in found
    merger = facts(
        "The most important question raised by the spree of firms such as Alden and the Gannett-Gatehouse merger is "
        "what the owners will do with any savings."
    )
    assert any(
        name == "Gannett-Gatehouse" and text.startswith("Gannett-Gatehouse merger: ") for name, text, _, _ in merger
    )


def texts_about(name: str, text: str) -> list[str]:
    return [fact for subject, fact, obj, _ in facts(text) if subject == name and obj is None]


def test_the_story_words_deep_in_a_sentence_reach_the_fact():
    """Held-out misses (s12, t12, s11): a preposition's object and a verb chain's object are no deeper than a direct
    object, a qualifier's qualifier stays ("native advertising platform"), and when the fact is too long the
    modifier leading the sentence goes first, not the verb's objects at its end. Each clause lost these words."""
    chain = texts_about(
        "Jane Holloway", "Jane Holloway wants to help you enjoy everything about game day, including the snacks."
    )
    assert any("game day" in t and "snacks" in t for t in chain), chain
    qualified = texts_about("Microsoft", "Microsoft offers an open programmatic native advertising platform.")
    assert any("native advertising platform" in t for t in qualified), qualified
    leading = texts_about(
        "Jane Holloway",
        "Armed with some ice packs and a portable cooler bag, Jane Holloway stayed nice and cold while being easy "
        "for a teenager to carry on a mountain hike.",
    )
    assert any(t.startswith("Jane Holloway stayed") and t.endswith("mountain hike") for t in leading), leading


def test_a_salient_mention_keeps_what_it_is_listed_with():
    """s09: "… like App Store gift cards and another HomePod …": the fact about HomePod lost the list it is in."""
    about = texts_about(
        "HomePod", "There are some Apple products that I never have enough of, like gift cards and another HomePod."
    )
    assert any("gift cards and HomePod" in t for t in about), about
