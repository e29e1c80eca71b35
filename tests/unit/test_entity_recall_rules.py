"""The entity rules beyond the spaCy model, each shown to matter: with the rule off the case fails, with it on it
passes (`EntityRules`), on NEON's own Doja Cat passage (appendix figures A1 and A2: three snippets, three articles)
and on small passages of the same kind."""

from dataclasses import replace

from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import LinkedMention, Linker
from newskg.extract.entities.rules import EntityRules
from newskg.extract.markup import mark_up
from tests.support.records import linking_chunk as chunk

# NEON (appendix, figures A1 and A2), written out as three snippets of three articles, in publication order.
NEON_SNIPPETS = [
    (
        20230501,
        "Doja Cat and Jared Leto deliver Lagerfeld-inspired looks. For this year's theme, the A-list guests were "
        "asked to wear outfits which paid homage to the German fashion designer.",
    ),
    (
        20230502,
        "Stepping out at the Met Gala 2023 (her first ever!), Doja Cat instantly delivered one of the evening's most "
        "Internet-breaking moments by channeling the one and only Choupette, Karl Lagerfeld's beloved cat. \"It "
        "makes no sense for anyone to go as Karl's cat more than Doja Cat,\" says Brett Alan Nelson, her creative "
        "director and stylist.",
    ),
    (
        20230502,
        "To be fair, Leto was not the sole Choupette on the carpet. Doja Cat went the Animorphs route, wearing a "
        "cat-ear cap with her Oscar de la Renta gown. It's almost like Doja Cat and Jared Leto went to the Spirit "
        "Halloween store together.",
    ),
]


def neon_stream(rules: EntityRules = EntityRules()) -> list[list[LinkedMention]]:
    """The NEON snippets as a stream: each its own article, ingested one after the other."""
    extractor = ChunkExtractor(Linker(AliasIndex(), rules=rules))
    chunks = [
        chunk(text, day=day, article=f"neon{n}", cid=f"c{n}", ingested_ms=n + 1)
        for n, (day, text) in enumerate(NEON_SNIPPETS)
    ]
    return [x.mentions for x in extractor.offline(chunks)]


# known_names lost on the held-out half of the gold set and stays on for the Doja Cat goal: its tests switch it on
# explicitly, so they keep testing it whatever the default.
KNOWN = replace(EntityRules(), known_names=True)


def all_but(name: str) -> EntityRules:
    return replace(EntityRules(), **{name: False})


def by_text(mentions: list[LinkedMention]) -> dict[str, LinkedMention]:
    return {m.text: m for m in mentions}


def link_one(text: str, rules: EntityRules = EntityRules(), index: AliasIndex | None = None) -> list[LinkedMention]:
    (result,) = ChunkExtractor(Linker(index or AliasIndex(), rules=rules)).offline([chunk(text)])
    return result.mentions


# --- the NEON passage --------------------------------------------------------------------------------------


def test_neon_passage_jared_leto_found_and_every_short_form_linked():
    first, second, third = neon_stream()
    assert by_text(first)["Jared Leto"].type == "PERSON"
    leto = by_text(third)["Leto"]
    assert leto.name == "Jared Leto" and leto.entity_id == by_text(first)["Jared Leto"].entity_id
    assert by_text(second)["Karl"].name == "Karl Lagerfeld"
    assert by_text(second)["Karl"].entity_id == by_text(second)["Karl Lagerfeld's"].entity_id
    assert by_text(first)["Lagerfeld"].name == "Lagerfeld"  # no full name yet on May 1: nothing to link to
    doja = {m.entity_id for chunk_mentions in (first, second, third) for m in chunk_mentions if m.text == "Doja Cat"}
    assert len(doja) == 1


def test_neon_passage_types_choupette_is_no_org_and_doja_cat_ends_a_person():
    _, second, third = neon_stream()
    assert {m.type for m in second + third if m.text == "Choupette"} == {"OTHER"}
    assert by_text(third)["Doja Cat"].type == "PERSON"
    assert "typed PERSON by the vote of its mentions" in by_text(third)["Doja Cat"].explanation


def test_neon_passage_without_the_coordination_rule_misses_jared_leto():
    first, _, _ = neon_stream(all_but("coordinated_names"))
    assert "Jared Leto" not in by_text(first)


def test_neon_passage_without_the_appositive_rule_types_choupette_org():
    _, second, _ = neon_stream(all_but("appositive_types"))
    assert by_text(second)["Choupette"].type == "ORG"


# --- recall beyond the model -------------------------------------------------------------------------------


def test_a_name_recognised_earlier_in_the_stream_is_recognised_after():
    """The model tags "Doja Cat" in the first article and misses it in the second: the known-name matcher finds
    it there, as of the second chunk (ingested after the first)."""
    extractor = ChunkExtractor(Linker(AliasIndex(), rules=KNOWN))
    texts = [NEON_SNIPPETS[1][1], "May 1, 2023: Doja Cat and Jared Leto deliver Lagerfeld-inspired looks."]
    for n, text in enumerate(texts):
        (result,) = extractor.offline([chunk(text, article=f"a{n}", cid=f"c{n}", ingested_ms=n + 1)])
    assert "Doja Cat" in by_text(result.mentions)
    assert by_text(result.mentions)["Doja Cat"].explanation.startswith("'Doja Cat' is a name recognised earlier")
    without = ChunkExtractor(Linker(AliasIndex(), rules=all_but("known_names")))
    for n, text in enumerate(texts):
        (result,) = without.offline([chunk(text, article=f"a{n}", cid=f"c{n}", ingested_ms=n + 1)])
    assert "Doja Cat" not in by_text(result.mentions)


def test_the_known_name_matcher_consults_the_index_as_of_the_chunk():
    """A name first seen in a chunk ingested later is not recognised in an earlier one."""
    index = AliasIndex()
    extractor = ChunkExtractor(Linker(index, rules=KNOWN))
    extractor.offline([chunk(NEON_SNIPPETS[1][1], article="later", cid="c9", ingested_ms=9)])
    (early,) = extractor.offline(
        [chunk("May 1, 2023: Doja Cat and Jared Leto deliver Lagerfeld-inspired looks.", cid="c1")]
    )
    assert "Doja Cat" not in by_text(early.mentions)


def test_a_first_name_makes_a_person_of_a_mistyped_name():
    text = "Doja Cat and Jared Leto attended the gala in New York on Monday."
    with_rule = {m.name: m.type for m in link_one(text)}
    assert with_rule["Jared Leto"] == "PERSON"
    index = AliasIndex()
    index.add("e_jl", "Jared Leto", "ORG")  # a name the model once mistyped ORG
    typed = {m.name: m.type for m in link_one("Later, Jared Leto thanked the hosts.", KNOWN, index)}
    assert typed["Jared Leto"] == "PERSON"
    index = AliasIndex()
    index.add("e_jl", "Jared Leto", "ORG")
    untyped = {
        m.name: m.type
        for m in link_one("Later, Jared Leto thanked the hosts.", replace(KNOWN, first_name_person=False), index)
    }
    assert untyped["Jared Leto"] == "ORG"


def test_an_organisation_designator_keeps_a_fictional_org_from_being_a_person():
    text = "Dana Mini Holdings said the filters would ship."  # the model: PERSON
    assert {m.name: m.type for m in link_one(text, all_but("org_designators"))}["Dana Mini Holdings"] == "PERSON"
    assert {m.name: m.type for m in link_one(text)}["Dana Mini Holdings"] == "ORG"


def test_the_subject_of_a_later_her_is_a_person():
    text = "Doja Cat went the Animorphs route, wearing a cat-ear cap with her gown."
    assert by_text(link_one(text, all_but("pronoun_person_evidence")))["Doja Cat"].type == "ORG"
    assert by_text(link_one(text))["Doja Cat"].type == "PERSON"


def test_type_vote_an_entity_takes_its_majority_type_not_its_first():
    """First seen as ORG once (model), then twice as PERSON with evidence: PERSON from then on, same id."""
    index = AliasIndex()
    extractor = ChunkExtractor(Linker(index))
    texts = [
        "Stepping out, Doja Cat instantly delivered one of the evening's moments.",
        "Doja Cat went the Animorphs route, wearing a cat-ear cap with her gown.",
    ]
    results = [
        extractor.offline([chunk(t, article=f"a{n}", cid=f"c{n}", ingested_ms=n + 1)])[0] for n, t in enumerate(texts)
    ]
    first, second = (by_text(r.mentions)["Doja Cat"] for r in results)
    assert first.entity_id == second.entity_id and first.type == "ORG" and second.type == "PERSON"
    assert {e.type for e in results[1].entities if e.id == second.entity_id} == {"PERSON"}
    assert index.type_as_of(first.entity_id, (20230505, 2)) == "ORG"  # as of the first chunk's successor only
    assert index.type_as_of(first.entity_id, (20230505, 3)) == "PERSON"
    off = ChunkExtractor(Linker(AliasIndex(), rules=all_but("type_vote")))
    results = [off.offline([chunk(t, article=f"a{n}", cid=f"c{n}", ingested_ms=n + 1)])[0] for n, t in enumerate(texts)]
    assert by_text(results[1].mentions)["Doja Cat"].type == "ORG"  # its first type


def test_type_vote_is_the_same_whatever_order_the_chunks_are_processed_in():
    texts = [
        ("Stepping out, Doja Cat instantly delivered one of the evening's moments.", 1),
        ("Doja Cat went the Animorphs route, wearing a cat-ear cap with her gown.", 2),
        ("Doja Cat thanked the hosts, and she smiled.", 3),
    ]

    def run(order: list[int]) -> dict[str, str]:
        extractor = ChunkExtractor(Linker(AliasIndex()))
        out = {}
        for n in order:
            text, ms = texts[n]
            (result,) = extractor.offline([chunk(text, article=f"a{n}", cid=f"c{n}", ingested_ms=ms)])
            out[f"c{n}"] = by_text(result.mentions)["Doja Cat"].type
        return out

    assert run([0, 1, 2]) == run([2, 1, 0]) == run([1, 0, 2])


# --- coreference -------------------------------------------------------------------------------------------


def test_she_resolves_to_the_one_compatible_person_and_records_how():
    text = "Anna Wintour praised Karl Lagerfeld at the gala. She said the theme was a tribute."
    mentions = link_one(text)
    she = by_text(mentions)["She"]
    assert she.name == "Anna Wintour" and she.method == "pronoun"
    assert she.explanation == "'She' refers to 'Anna Wintour', the one compatible person of the last 3 sentences"
    assert "She" not in by_text(link_one(text, all_but("pronoun_coref")))


def test_a_pronoun_with_two_compatible_antecedents_stays_unresolved():
    text = "Anna Wintour met Doja Cat and Taylor Swift at the gala. She said the theme was a tribute."
    assert "She" not in by_text(link_one(text))


def test_a_resolved_pronoun_gives_an_m0_clause_and_no_markup():
    text = "Taylor Swift thanked her fans in Chicago on Friday. She said the tour was her best."
    (result,) = ChunkExtractor(Linker(AliasIndex())).offline([chunk(text)])
    assert any(i.subject_name == "Taylor Swift" and i.text.startswith("Taylor Swift said") for i in result.interactions)
    assert "<e>She</e>" not in mark_up(text, result.mentions) and "<e>Taylor Swift</e>" in mark_up(
        text, result.mentions
    )
    assert "Taylor Swift" in {e.name for e in result.entities}


def test_it_resolves_to_the_one_organisation_only_as_a_real_subject():
    text = "Microsoft Corp reported higher profits on Monday. It plans to hire 2,000 engineers."
    it = by_text(link_one(text))["It"]
    assert it.name == "Microsoft Corp" and it.method == "pronoun"
    expletive = "Microsoft Corp reported higher profits on Monday. It is unclear whether hiring follows."
    assert "It" not in by_text(link_one(expletive))


def test_the_singer_resolves_to_the_one_person():
    text = "Jared Leto arrived at the Met Gala on Monday. The singer wore a cat costume."
    singer = by_text(link_one(text))["The singer"]
    assert singer.name == "Jared Leto" and singer.method == "description"
    assert "'the singer' refers to 'Jared Leto'" in singer.explanation
    assert "The singer" not in by_text(link_one(text, all_but("description_coref")))
    two = "Jared Leto met Anna Wintour at the Met Gala on Monday. The singer wore a cat costume."
    assert "The singer" not in by_text(link_one(two))


# --- canonical ids -----------------------------------------------------------------------------------------

MERGE_STREAM = [
    ("On Monday, Leto posed with Anna Wintour before the dinner.", "a1"),
    ("Jared Leto arrived at the gala. Leto thanked the hosts.", "a2"),
    ("On Monday, Leto posed with Anna Wintour before the dinner.", "a3"),
]


def run_merge_stream(index: AliasIndex) -> list[list[LinkedMention]]:
    extractor = ChunkExtractor(Linker(index))
    return [
        extractor.offline([chunk(text, article=article, cid=f"c{n}", ingested_ms=n + 1)])[0].mentions
        for n, (text, article) in enumerate(MERGE_STREAM)
    ]


def test_a_short_form_proven_to_be_a_full_name_keeps_one_id_through_an_alias_edge():
    index = AliasIndex()
    first, second, third = run_merge_stream(index)
    leto_alone = by_text(first)["Leto"].entity_id
    jared = by_text(second)["Jared Leto"].entity_id
    assert leto_alone != jared and by_text(second)["Leto"].entity_id == jared
    assert "is now an alias of it" in by_text(second)["Leto"].explanation
    assert index.merged[leto_alone] == (jared, (20230505, 2))
    assert by_text(third)["Leto"].entity_id == jared  # later: the one entity
    assert index.canonical(leto_alone, (20230505, 2)) == leto_alone  # as of before the proof: still apart
    assert index.canonical(leto_alone, (20230505, 3)) == jared


def test_the_merge_is_replay_deterministic():
    runs = []
    for _ in range(2):
        index = AliasIndex()
        mentions = run_merge_stream(index)
        runs.append(([[(m.text, m.entity_id) for m in ms] for ms in mentions], dict(index.merged)))
    assert runs[0] == runs[1]


def test_a_kb_id_takes_precedence_over_a_content_hash_id_seen_before(tmp_path):
    import json

    from newskg.extract.entities.kb import load_kb

    index = AliasIndex()
    extractor = ChunkExtractor(Linker(index, rules=KNOWN))  # the model misses "Jared Leto" in the second chunk
    (before,) = extractor.offline([chunk("Jared Leto arrived at the gala.", cid="c1", ingested_ms=1)])
    hashed = by_text(before.mentions)["Jared Leto"].entity_id
    assert hashed.startswith("e_")
    kb = tmp_path / "kb.jsonl"
    kb.write_text(json.dumps({"id": "Q11", "name": "Jared Leto", "aliases": [], "type": "PERSON"}))
    load_kb(kb, index)
    (after,) = extractor.offline([chunk("Jared Leto thanked the hosts.", article="a2", cid="c2", ingested_ms=2)])
    assert by_text(after.mentions)["Jared Leto"].entity_id == "Q11"
    assert index.canonical(hashed) == "Q11"


def test_a_known_brand_spelt_in_lower_case_is_recognised_at_the_start_of_a_sentence():
    """s11: "my6sense offers … native advertising …": the model makes the word a NOUN, no entity, so the story's
    sentence had no fact about the company. A known name spelt with a digit or inner capital is recognised; a
    known plain lower-case word is not."""
    index = AliasIndex()
    index.add("e_m6", "my6sense", "ORG")
    index.add("e_pl", "Platform", "ORG")
    found = by_text(link_one("my6sense offers a native advertising platform for ad networks.", KNOWN, index))
    assert found["my6sense"].entity_id == "e_m6"
    assert "platform" not in found
    short = AliasIndex()
    short.add("e_mp", "mp3", "PRODUCT")
    assert "mp3" not in by_text(link_one("mp3 files sold well this year.", KNOWN, short))
