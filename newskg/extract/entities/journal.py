"""What linking one chunk taught the linker, kept so a restarted extract stage knows exactly what it knew.

The alias index and the article memories live in the process. Before this journal, a restarted stage rebuilt the
index from the graph's entities: their names, aliases and mention counts, but not the context words, type votes,
the alias times or the memories of half-linked articles. So a chunk linked after a restart could link differently
from the same chunk in an undisturbed run. Now every written chunk carries its journal (graph node `Linking`,
written in the same batch write, after everything else of the chunk):

- the index operations linking made (add, alias, merge, vote), with the chunk's as-of time and context words,
  replayed in the order they were first made;
- what the chunk added to its article's memory (short forms, names, votes seen in that article: linking only
  adds to it), so the article's next chunk links as it would have without the restart.

A chunk with a journal of a record of its article in the graph was written whole: the stage does not link that
article's records of it again (that would apply its operations twice, and a later record would link against a
larger index), it records the record as a sighting and re-mirrors what the graph holds for the chunk. The index
learns a chunk's operations only once its write succeeded (extract/stage.py): the index is always journals of the
graph replayed. The same journals also travel between extract replicas on the linking log
(extract/entities/link_log.py); the index applies them commutatively (alias_index.py), so the order they arrive
in does not matter, and each once (`Linker.held`)."""

from __future__ import annotations

import logging
from typing import Protocol

from newskg.core.ids import digest
from newskg.core.records import ArticleMemory, Chunk, IndexOp, LinkJournal
from newskg.graph.connection import GraphConnection
from newskg.graph.store import journals

log = logging.getLogger(__name__)

# The journal's types are shared records (core/records.py): the linking log carries them between replicas.
__all__ = ["ArticleMemory", "IndexOp", "LinkJournal", "journal_id", "replay_all"]


def journal_id(chunk: Chunk) -> str:
    """One journal per record of a chunk: a redelivered or re-emitted record has the same one. The same article
    ingested again later (another record) is not linked again once a record of it is written whole (the stage
    looks journals up by chunk id and article); the same text in another article is another record."""
    return "lj_" + digest(chunk.id, str(chunk.day), str(chunk.ingested_ms), chunk.article_id)


class Replayable(Protocol):
    held: set[str]

    def replay(self, journal: LinkJournal) -> None: ...


def replay_all(linker: Replayable, conn: GraphConnection) -> int:
    """Teach the linker every journal in the graph it does not hold, in the order they were made (the index does
    not depend on the order: extract/entities/alias_index.py); returns how many."""
    replayed = 0
    for key, text in journals.in_order(conn):
        if text == journals.NO_JOURNAL or key in linker.held:
            continue
        linker.replay(LinkJournal.model_validate_json(text))
        linker.held.add(key)
        replayed += 1
    if replayed:
        log.info("the linker resumed from %d chunk journals", replayed)
    return replayed
