"""Each fact's salience bound, kept in the graph: what reads.TOP_OF_THE_DAY orders a busy entity's day by before it
checks any fact, so a hub's bare name costs ~k facts' source walks and not its whole day's.

A fact's salience as of D (qa/retrieve._salience, reads._TIMELINE_REST) is the sources whose articles are visible
as of D, then its confidence plus how near the lead of such an article it is stated. Over all its evidence, with
no as-of, both are at least as high in every view: `sources_bound` (its distinct sources, counted as nodes: two
sources never share a node, whatever their names) and `weight_bound` (its confidence plus the best lead's term).
The published day and id, salience's last keys, are the fact's own in every view.

A bound must never be low, so it is recounted, never incremented, after every write that can raise it, in the
batch that writes it: a fact's new evidence or record (its id), a chunk's new article or earlier record, an
article's new source (every fact whose evidence is in an article the batch writes: chunks and sightings always
arrive with theirs, writer.write_batch). A fact without bounds (a crash before the recount, a graph from before
them) is examined first by the read, never missed; `graph init` counts them for an older graph."""

from __future__ import annotations

from newskg.graph.connection.base import Statement
from newskg.graph.store.reads import weight_of

_BOUNDS_OF_X = f"""
OPTIONAL MATCH (x)-[:EVIDENCE]->(c:Chunk)-[:IN]->(:Article)-[:FROM]->(s:Source)
WITH x, count(DISTINCT s) AS sources, min(c.sentence_start) AS lead
SET x.sources_bound = sources, x.weight_bound = {weight_of("lead")}
"""
# The facts whose bounds a batch may raise: those it writes, and those whose evidence is in an article it writes.
RECOUNT_FACT_BOUNDS = (
    """
UNWIND $articles AS aid
OPTIONAL MATCH (:Article {id: aid})<-[:IN]-(:Chunk)<-[:EVIDENCE]-(y:Interaction)
WITH collect(DISTINCT y.id) AS evidenced
UNWIND evidenced + $ids AS xid
WITH DISTINCT xid
MATCH (x:Interaction {id: xid})"""
    + _BOUNDS_OF_X
)

# A graph written before the bounds (graph/store/schema.py init, and its printed DDL script): every fact bounded.
FACT_WITHOUT_BOUNDS = "MATCH (x:Interaction) WHERE x.sources_bound IS NULL RETURN x.id AS id LIMIT 1"
BOUND_ALL_FACTS = "MATCH (x:Interaction) WHERE x.sources_bound IS NULL" + _BOUNDS_OF_X


def recount_statements(interaction_ids: list[str], article_ids: list[str]) -> list[Statement]:
    """The statement that recounts the bounds a batch may have raised; none when it wrote neither."""
    if not interaction_ids and not article_ids:
        return []
    return [(RECOUNT_FACT_BOUNDS, {"ids": sorted(set(interaction_ids)), "articles": sorted(set(article_ids))})]
