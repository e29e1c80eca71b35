"""The extract stage's per-chunk guard: a chunk whose extraction raises is set aside with its exception and the
others of the batch go on; an infrastructure failure stops the step (tests/integration/test_extract_poison.py
runs the same through the broker, the DLQ and FalkorDB)."""

from types import SimpleNamespace

import pytest
import redis.exceptions

from newskg.core.llm.client import BudgetExceeded
from newskg.core.records import Chunk
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.linker import Linker
from newskg.extract.failures import EXTRACTION_ERROR, must_stop
from newskg.extract.stage import WRITE_ERROR, ExtractOptions, ExtractStage
from tests.support.records import POISON, POISON_DAY  # the chunk the integration test sends too

GOOD = "Doja Cat met Jared Leto at the Met Gala in New York on Monday."


def chunk(cid: str, text: str, day: int = 20230501) -> Chunk:
    return Chunk(
        id=cid,
        text=text,
        sentences=[text],
        article_id=f"a_{cid}",
        article_ids=[f"a_{cid}"],
        source="s",
        source_id="s_1",
        day=day,
        published=str(day),
        ingested_at="2023-05-01T00:00:00Z",
        ingested_ms=1,
        sentence_start=0,
        sentence_end=1,
    )


def stage(linker: Linker | None = None) -> ExtractStage:
    # M0 reads nothing from the graph while extracting: a store without a connection is enough here.
    return ExtractStage(
        store=SimpleNamespace(conn=None),
        extractor=ChunkExtractor(linker or Linker(AliasIndex())),
        options=ExtractOptions(),
    )


def test_a_chunk_that_breaks_validation_is_set_aside_and_the_others_go_on():
    extractions, failures = stage().extract_each(
        [chunk("c1", GOOD), chunk("c2", POISON, POISON_DAY), chunk("c3", GOOD.replace("Monday", "Tuesday"))]
    )
    assert [x.chunk.id for x in extractions] == ["c1", "c3"] and all(x.interactions for x in extractions)
    ((bad, exc, reason),) = failures
    assert bad.id == "c2" and reason == EXTRACTION_ERROR and type(exc).__name__ == "ValidationError"
    assert "event_day" in str(exc)
    with pytest.raises(Exception, match="event_day"):
        stage().extract([chunk("c2", POISON, POISON_DAY)])  # `extract text` shows the error itself


class FlakyLinker(Linker):
    def __init__(self, failure: BaseException):
        super().__init__(AliasIndex())
        self.failure = failure

    def link(self, doc, article_id, as_of=None):
        if "Leto" in doc.text:
            raise self.failure
        return super().link(doc, article_id, as_of)


def test_a_linker_bug_costs_only_its_chunk():
    extractions, failures = stage(FlakyLinker(KeyError("boom"))).extract_each(
        [chunk("c1", "Anna Wintour praised the theme on Monday."), chunk("c2", GOOD)]
    )
    assert [x.chunk.id for x in extractions] == ["c1"] and [(c.id, r) for c, _, r in failures] == [
        ("c2", EXTRACTION_ERROR)
    ]


@pytest.mark.parametrize(
    "failure", [redis.exceptions.ConnectionError("graph down"), TimeoutError("slow"), BudgetExceeded("spent")]
)
def test_infrastructure_failures_and_the_budget_stop_the_step(failure):
    assert must_stop(failure)
    with pytest.raises(type(failure)):
        stage(FlakyLinker(failure)).extract_each([chunk("c1", "Anna Wintour smiled."), chunk("c2", GOOD)])


def test_data_errors_are_not_infrastructure():
    assert not any(must_stop(e) for e in (ValueError("x"), KeyError("x"), redis.exceptions.ResponseError("bad")))


def test_review_finding_a_chunk_the_graph_refuses_teaches_the_linker_nothing():
    """Review finding: "a NUL byte → graph_write_error" — found by tests/integration/test_adversarial_corpus.py: the
    NUL chunk was linked before its write was refused, so the alias index kept "Ingrid Gallagher \\x00" and every
    later chunk naming Ingrid Gallagher carried that name into its own write and was dead-lettered too. A chunk
    holding a NUL or a lone surrogate in any field is now refused before it is linked (`graph_write_error`)."""
    extract = stage()
    extractions, failures = extract.extract_each(
        [
            chunk("c1", "Dmitri Iwasaki thanked Ingrid Gallagher \x00 in Utrecht on Friday."),
            Chunk(**{**chunk("c2", GOOD).model_dump(), "title": "Ti\udfc0tle"}),
        ]
    )
    assert extractions == [] and [(c.id, r, type(e).__name__) for c, e, r in failures] == [
        ("c1", WRITE_ERROR, "Unwritable"),
        ("c2", WRITE_ERROR, "Unwritable"),
    ]
    assert len(extract.extractor.linker.index) == 0  # nothing learned from either
    (later,), _ = extract.extract_each([chunk("c3", "Ingrid Gallagher resigned from Corvid Systems on Thursday.")])
    assert all("\x00" not in e.name and all("\x00" not in a for a in e.aliases) for e in later.entities)
