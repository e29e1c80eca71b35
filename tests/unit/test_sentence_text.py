"""An M0 fact's text is its whole sentence when that stands alone (extract/openie/sentence_text.py): the speaker,
the condition, the score and the second half of a comparison stay with it; otherwise the clause stands."""

from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from tests.unit.test_linking_offline import chunk


def texts(text: str) -> dict[str, set[str]]:
    (result,) = ChunkExtractor(Linker(AliasIndex())).offline([chunk(text)])
    found: dict[str, set[str]] = {}
    for i in result.interactions:
        found.setdefault(i.subject_name, set()).add(i.text)
    return found


def test_a_short_declarative_sentence_is_the_fact_whole_with_its_numbers():
    found = texts("The Buffalo Sabres are on a 1-6-2 skid following a 9-2-1 start to the season.")
    assert found["Buffalo Sabres"] == {"The Buffalo Sabres are on a 1-6-2 skid following a 9-2-1 start to the season."}


def test_who_said_it_stays_with_what_was_said():
    found = texts("Mike Pompeo said the Afghan war may soon conclude through a political settlement.")
    assert found["Mike Pompeo"] == {"Mike Pompeo said the Afghan war may soon conclude through a political settlement."}


def test_a_pronoun_subject_the_linker_resolved_reads_as_the_name():
    found = texts("Jonas Brodin played 20 minutes on Monday. He scored for the Wild in the second period.")
    assert "Jonas Brodin scored for the Wild in the second period." in found["Jonas Brodin"]


def test_a_sentence_that_cannot_stand_alone_leaves_the_clause():
    found = texts(
        "Marcelo Claure will present the company's five-year plan to investors, which analysts said "
        "they expected to include deep cuts across its units in Europe and Asia over the coming decade, "
        "according to two people familiar with the matter who asked not to be named because the talks are private."
    )  # over the length a fact may have
    assert all(not text.endswith(".") for text in found["Marcelo Claure"])
    found = texts("Critics say it was never tested, and Marcelo Claure will present the plan on Monday.")
    assert all("it was never tested" not in text for text in found["Marcelo Claure"])  # "it" names nothing here
    found = texts("Headlines: Marcelo Claure will present the plan")  # no full stop: a headline, not prose
    assert all(not text.endswith(".") for text in found.get("Marcelo Claure", set()))


def test_a_sentence_cut_from_a_longer_quotation_is_not_whole():
    found = texts('"Marcelo Claure will present the plan on Monday.')
    assert all(not text.endswith(".") for text in found.get("Marcelo Claure", set()))


def test_without_whole_sentences_every_fact_is_its_clause():
    (result,) = ChunkExtractor(Linker(AliasIndex()), whole_sentences=False).offline(
        [chunk("Mike Pompeo said the Afghan war may soon conclude through a political settlement.")]
    )
    assert all(not i.text.endswith(".") for i in result.interactions)
