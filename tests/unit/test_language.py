"""An article's language is detected from its text (ingest/process/language.py), travels on its chunks, and a
chunk in a language the NLP model was not trained on gets no entities and no facts (extract/nlp.py); the process
stage's sentence boundaries hold in the extract stage's parse."""

from newskg.core.records import RawArticle
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.nlp import parse
from newskg.ingest.process.article import build_article
from newskg.ingest.process.language import detect_language
from tests.unit.test_linking_offline import chunk

GERMAN = "Die Polizei in Berlin hat am Dienstag drei Männer festgenommen, teilte ein Sprecher der Behörde mit."
ENGLISH = "Police in Berlin arrested three men on Tuesday, a spokesman for the authority said."


def test_the_language_comes_from_the_text_not_the_page_declaration():
    assert detect_language(ENGLISH) == "en" and detect_language(GERMAN) == "de"
    japanese = "トレンドマイクロは3月9日、スマホ向けのセキュリティアプリを発表しました。今回の新製品は無料です。"
    assert detect_language(japanese) == "ja"
    assert detect_language("Too short.", declared="fr") == "fr"  # too short to tell: the declaration stands
    html = f"<html lang='en'><body><article><p>{GERMAN}</p><p>{GERMAN}</p></article></body></html>"
    article = build_article(RawArticle(html=html, fetched_at="2026-11-01T00:00:00Z", fallback_date="2026-11-01"))
    assert article.lang == "de"  # declared English, written in German


def test_a_chunk_in_another_language_gets_no_entities_and_no_facts():
    extractor = ChunkExtractor(Linker(AliasIndex()))
    (german,) = extractor.offline([chunk(GERMAN).model_copy(update={"lang": "de"})])
    assert german.mentions == [] and german.interactions == [] and german.marked_text == GERMAN
    (english,) = extractor.offline([chunk(ENGLISH, cid="c2").model_copy(update={"lang": "en"})])
    assert english.mentions  # Berlin


def test_the_stage_sentence_boundaries_hold_in_the_parse():
    """A headline the process stage split off is never parsed into the next sentence ("Whole Foods future New
    signs in stores appeared …")."""
    sentences = ["Whole Foods future", "New signs in stores appeared this month."]
    (doc,) = parse([" ".join(sentences)], [sentences])
    assert [s.text for s in doc.sents] == sentences
