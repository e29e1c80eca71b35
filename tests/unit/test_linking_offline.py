"""Entity linking and the offline extractor (M0) on a passage in the style of NEON's Doja Cat example."""

from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex, Recorded
from newskg.extract.entities.coref import Canonical, resolve
from newskg.extract.entities.linker import Linker
from newskg.extract.entities.rules import EntityRules
from newskg.extract.markup import mark_up
from tests.support.records import linking_chunk as chunk

PASSAGE = (
    "Doja Cat dressed as Choupette at the Met Gala in New York on Monday. The singer said Karl Lagerfeld's "
    "cat had inspired her look, and Jared Leto also arrived as Choupette. Leto posed with Anna Wintour "
    "before the dinner. Doja Cat thanked Karl's estate in a statement on May 3, 2023, and Wintour praised "
    "the theme."
)


def test_short_forms_and_possessives_link_to_the_full_entity():
    extractor = ChunkExtractor(Linker(AliasIndex()))
    (result,) = extractor.offline([chunk(PASSAGE)])
    by_text = {}
    for m in result.mentions:
        by_text.setdefault(m.text, set()).add(m.entity_id)
    names = {m.entity_id: m.name for m in result.mentions}
    assert names[next(iter(by_text["Leto"]))] == "Jared Leto"
    assert by_text["Leto"] == by_text["Jared Leto"]
    assert by_text["Karl"] == by_text["Karl Lagerfeld's"] and names[next(iter(by_text["Karl"]))] == "Karl Lagerfeld"
    assert by_text["Wintour"] == by_text["Anna Wintour"]
    assert len(by_text["Doja Cat"]) == 1
    assert "within the article, 'Leto' abbreviates 'Jared Leto'" in next(
        m.explanation for m in result.mentions if m.text == "Leto"
    )


def test_offline_interactions_have_the_right_subject_and_day():
    extractor = ChunkExtractor(Linker(AliasIndex()))
    (result,) = extractor.offline([chunk(PASSAGE)])
    found = {(i.subject_name, i.text, i.object_name, i.event_day) for i in result.interactions}
    dressed = "Doja Cat dressed as Choupette at the Met Gala in New York on Monday."  # the whole sentence
    assert ("Doja Cat", dressed, "Choupette", 20230501) in found  # "on Monday"
    # "her" in its sentence names no one on its own: the clause stands instead, dated by publication
    assert ("Jared Leto", "Jared Leto also arrived as Choupette", "Choupette", 20230505) in found
    assert ("Jared Leto", "Leto posed with Anna Wintour before the dinner.", "Anna Wintour", 20230505) in found
    thanked = "Doja Cat thanked Karl's estate in a statement on May 3, 2023, and Wintour praised the theme."
    assert ("Doja Cat", thanked, "Karl Lagerfeld", 20230503) in found
    assert all(i.variant == "M0" and i.chunk_ids == ["c1"] and i.published_day == 20230505 for i in result.interactions)
    assert len({i.id for i in result.interactions}) == len(result.interactions)


def test_short_forms_link_across_documents_through_the_alias_index():
    extractor = ChunkExtractor(Linker(AliasIndex()))
    (first,) = extractor.offline([chunk(PASSAGE)])
    (later,) = extractor.offline(
        [chunk("Leto and Wintour met again in Paris on Friday.", article="a2", cid="c2", ingested_ms=2)]
    )  # ingested after the first: it may consult it
    first_ids = {m.name: m.entity_id for m in first.mentions}
    later_ids = {m.text: m.entity_id for m in later.mentions}
    assert later_ids["Leto"] == first_ids["Jared Leto"] and later_ids["Wintour"] == first_ids["Anna Wintour"]


def test_a_surname_inside_a_longer_name_is_not_a_lone_surname():
    """A known person's surname as the last word of another name ("the Talaira Mini") links to nothing."""
    extractor = ChunkExtractor(Linker(AliasIndex()))
    (first,) = extractor.offline([chunk("Reviewer Dana Mini praised the drone on Monday.", cid="c1")])
    (later,) = extractor.offline(
        [
            chunk(
                "The Harbour Trust unveiled the Talaira Mini, a water filter, on Friday.",
                article="a2",
                cid="c2",
                ingested_ms=2,
            )
        ]
    )
    mini = {m.entity_id for m in first.mentions if m.name == "Dana Mini"}
    assert mini and not mini & {m.entity_id for m in later.mentions}


def test_a_month_is_never_a_surname():
    index = AliasIndex()
    index.add("e_1", "Mohegan Sun Arena July", "PERSON")  # a misread name from a real page
    extractor = ChunkExtractor(Linker(index))
    (result,) = extractor.offline([chunk("The council scheduled the vote for July 8, 2033.")])
    assert "e_1" not in {m.entity_id for m in result.mentions}
    assert index.lookup("July", "PERSON") is None


def test_alias_index_rules():
    index = AliasIndex()
    index.add("e1", "SR-2023-052", "PRODUCT")
    index.add("e2", "National Aeronautics and Space Administration", "ORG", recorded=Recorded(aliases=["NASA"]))
    index.add("e3", "Federal Bureau of Investigation", "ORG")
    index.add("e4", "Karl Lagerfeld", "PERSON", context={"fashion", "designer", "chanel"})
    assert index.lookup("SR-2023-053", "PRODUCT") is None  # differs only in digits: never merged
    assert index.lookup("SR-2023-052", "ORG").entity_id == "e1"  # an exact recorded name is never missed
    assert index.lookup("NASA", "ORG").method == "exact"
    assert index.lookup("FBI", "ORG").method == "acronym"
    assert index.lookup("Karl Lagerfield", "PERSON", {"chanel", "designer"}).method == "fuzzy"
    assert index.lookup("Karl Lagerfield", "PLACE", {"chanel"}) is None  # types must agree for fuzzy
    assert index.lookup("Lagerfeld", "ORG").entity_id == "e4"  # spaCy's ORG for a lone surname


def test_markup_escapes_existing_angle_brackets():
    extractor = ChunkExtractor(Linker(AliasIndex()))
    ((ext, _),) = extractor.link([chunk("Doja Cat wrote <e>fake</e> tags & more.")])
    assert ext.marked_text == "<e>Doja Cat</e> wrote &lt;e&gt;fake&lt;/e&gt; tags &amp; more."
    assert mark_up("plain", []) == "plain"


def test_kb_entries_become_the_linking_targets(tmp_path):
    import json

    import pytest

    from newskg.extract.entities.kb import KBError, load_kb

    kb = tmp_path / "kb.jsonl"
    kb.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {
                    "id": "Q312",
                    "name": "Doja Cat",
                    "aliases": ["Amala Dlamini"],
                    "type": "PERSON",
                    "description": "singer",
                },
                {"id": "Q2", "name": "Met Gala", "aliases": [], "type": "EVENT"},
            ]
        )
    )
    index = AliasIndex()
    assert load_kb(kb, index) == 2
    (result,) = ChunkExtractor(Linker(index)).offline([chunk("Amala Dlamini arrived. Doja Cat smiled.")])
    assert {m.entity_id for m in result.mentions if "Doja" in m.text or "Amala" in m.text} == {"Q312"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "name": "y", "type": "MOOD"}')
    with pytest.raises(KBError, match=r"bad\.jsonl:1"):
        load_kb(bad, AliasIndex())


def test_short_forms_stay_apart_when_the_rules_are_off():
    text = "Jared Leto arrived at the gala. Later, Leto thanked the designers."
    plain = ChunkExtractor(Linker(AliasIndex(), rules=EntityRules.none()))
    full = ChunkExtractor(Linker(AliasIndex()))
    names_plain = {e.name for e in plain.offline([chunk(text)])[0].entities}
    names_full = {e.name for e in full.offline([chunk(text)])[0].entities}
    assert "Jared Leto" in names_full and "Leto" not in names_full
    assert names_plain != names_full


def test_an_organisation_short_form_abbreviates_only_a_legal_name():
    """t02: "ESA has investigated …" was linked to "ESA Topical Team", a team of the agency named earlier in the
    article; a company's short form still joins its legal name ("Microsoft" → "Microsoft Corp")."""
    team = [Canonical("ESA Topical Team", "ORG")]
    assert resolve("ESA", "ORG", team) == Canonical("ESA", "ORG")
    assert resolve("Amazon", "ORG", [Canonical("Amazon Web Services", "ORG")]).name == "Amazon"
    legal = resolve("Microsoft", "ORG", [Canonical("Microsoft Corp", "ORG")])
    assert legal.name == "Microsoft Corp" and "abbreviates" in legal.explanation
    assert resolve("Ford", "ORG", [Canonical("Ford Motor Company", "ORG")]).name == "Ford Motor Company"
    assert resolve("NASA", "ORG", [Canonical("National Aeronautics and Space Administration", "ORG")]).name.startswith(
        "National"
    )
