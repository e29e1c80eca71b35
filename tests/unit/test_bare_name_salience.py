"""A query that is only a name ("julian assange") gets the day's lead story first: the facts most sources carried
by D, then the most trusted and nearest their article's lead, not the ones most similar to the bare name (every
fact of the entity holds it). A query with topic words still ranks by similarity. The store here is a stand-in
returning timeline rows: what is tested is the ranking in memory (qa/retrieve.py); the read itself runs on the real
graph in tests/integration/test_retrieval.py and bench/replay.py measures the ranking on real pages."""

from __future__ import annotations

from newskg.graph.store.rows import TimelineRow
from newskg.qa.retrieve import Retriever
from newskg.qa.similarity import QueryTexts

DAY = 20191119
NAME = "Julian Assange"


def row(n: int, text: str, sources: int, confidence: float | None, lead: int | None) -> TimelineRow:
    return TimelineRow(
        id=f"x{n}",
        text=text,
        event_day=DAY,
        event_iso="2019-11-19",
        published_day=DAY,
        ingested_at="t",
        ingested_ms=n,
        variant="M0",
        confidence=confidence,
        subject_id="e",
        object_id=None,
        sources=[f"s{i}" for i in range(sources)],
        n_sources=sources,
        urls=[],
        lead=lead,
    )


ROWS = [
    row(1, "Julian Assange does face in US", 1, 0.31, 9),
    row(2, "was immediate comment from Julian Assange", 1, 0.22, 12),
    row(3, "Swedish prosecutors dropped their investigation into Julian Assange", 3, 0.74, 0),
    row(4, "Julian Assange's lawyers welcomed the decision", 2, 0.66, 3),
]


class Timeline:
    def timeline(self, *args, **kwargs) -> list[TimelineRow]:
        return ROWS


def top(query: QueryTexts, by_salience: bool = True) -> list[str]:
    retriever = Retriever(Timeline(), None)  # pyright: ignore[reportArgumentType] - only timeline() is read
    retriever.bare_by_salience = by_salience
    return [e.text for e in retriever.retrieve("temporal", "e", query, DAY, 3, variant="M0")]


def test_a_bare_name_gets_the_day_lead_story_first():
    bare = QueryTexts("julian assange", f"(Date: November 19, 2019) {NAME}", "")
    assert top(bare)[:2] == [ROWS[2].text, ROWS[3].text]


def test_by_similarity_the_bare_name_picks_the_fragment_that_is_mostly_the_name():
    bare = QueryTexts("julian assange", f"(Date: November 19, 2019) {NAME}", "")
    assert top(bare, by_salience=False)[0] != ROWS[2].text


def test_topic_words_still_rank_by_similarity():
    asked = QueryTexts("julian assange lawyers", f"(Date: November 19, 2019) {NAME} lawyers", "lawyers")
    assert top(asked)[0] == ROWS[3].text


class Refusing:
    """A mirror whose embedder fails the test if anything is embedded."""

    class embedder:
        name = "refusing"

        @staticmethod
        def embed(texts: list[str]) -> list[list[float]]:
            raise AssertionError(f"embedded {texts}")


def test_a_bare_name_embeds_nothing_and_scores_by_rank():
    """Issue 30: ranked by salience, a name alone needs no query vector: the temporal answer's only embedding was
    the one that broke ties, which a fact's confidence all but never leaves."""
    retriever = Retriever(Timeline(), Refusing())  # pyright: ignore[reportArgumentType] - timeline() and the embedder
    bare = QueryTexts("julian assange", f"(Date: November 19, 2019) {NAME}", "")
    found = retriever.retrieve("temporal", "e", bare, DAY, 3, variant="M0")
    assert [e.text for e in found][:2] == [ROWS[2].text, ROWS[3].text]
    assert [e.score for e in found] == [1.0, 0.5, round(1 / 3, 6)] and all(e.similarity is None for e in found)
