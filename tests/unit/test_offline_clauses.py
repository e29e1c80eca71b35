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
