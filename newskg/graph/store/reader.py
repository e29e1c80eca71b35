"""The as-of reads of the graph (QA, the explorer, the mirror, the CLI and the evaluations): every one takes an
as-of (AsOf, a yyyymmdd day, or None for the graph as it stands now; graph/store/asof.py). One of the three users
of the graph store (graph/store/store.py); the Cypher is in graph/store/reads.py."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import cast

from newskg.core.records import Chunk, Interaction, Variant
from newskg.core.spikes import days_from
from newskg.graph.connection import GraphConnection
from newskg.graph.connection.base import Params
from newskg.graph.store import reads
from newskg.graph.store.asof import AsOf, days_between
from newskg.graph.store.rows import (
    Count,
    EntityAsOf,
    EntityChunk,
    EntityName,
    EntityProfileRow,
    EvidenceSources,
    IdRow,
    InteractionSource,
    LateCounts,
    StoredChunk,
    TimelineRow,
    TopEntity,
    chunk_of,
    row_of,
    rows_of,
)

COUNTS_LABELS = ("Source", "Article", "Chunk", "Entity", "Interaction")
# reads.TOP_OF_THE_DAY examines 2k + TOP_SLACK candidates: enough for the k-th to be proven past a few that are not
# visible, not of the variant or bounded above their salience as of D (a source that reported the fact later).
TOP_SLACK = 8
# An entity whose focus day was too small to read by bounds is not tried again for QUIET_S seconds (it may become
# busy: a spike), and at most QUIET_MAX are remembered (~100 bytes each; the memory is emptied when full).
QUIET_S = 600.0
QUIET_MAX = 200_000
# An entity known to have fewer facts than this (note_facts) has no day worth reading by bounds: its days hold a
# handful, whose whole read costs what the bounded one does, and the try would add a round trip to most answers (at
# 1 M most questions name an entity of the long tail; ~300 of the QA bench's 100k entities pass it). A day of
# hundreds of facts is only ever an entity's with hundreds.
BUSY_FACTS = 500


@dataclass(frozen=True)
class FactScope:
    """Which interactions of a window are read: only `variant`'s (None: every extraction variant), with `via_chunks`
    also those stated by visible chunks that mention the entity (not only those naming it), and with `rings_for`
    = k only those of the days nearest the focus that together hold k (the farthest of them whole): all that
    temporal retrieval ranks (reads.TIMELINE); with `salient` too, only the k of those a bare name's answer keeps
    (qa/retrieve._salience)."""

    variant: Variant | None = None
    via_chunks: bool = False
    rings_for: int | None = None
    salient: bool = False

    def __post_init__(self) -> None:
        if self.rings_for is not None and self.rings_for < 1:
            raise ValueError(f"rings_for is a count of facts, at least 1: {self.rings_for}")
        if self.salient and self.rings_for is None:
            raise ValueError("salient keeps the k most salient facts: it needs rings_for = k")

    def top(self, limit: int) -> int:
        """How many rows the read returns at most (reads.TIMELINE's $top)."""
        return min(self.rings_for, limit) if self.salient and self.rings_for is not None else limit


class AsOfReader:
    """Reads over one connection, each as of a day."""

    def __init__(self, conn: GraphConnection):
        self.conn = conn
        self._quiet: dict[str, float] = {}  # entity id → until when it is not read by bounds (monotonic s)
        self._facts: dict[str, int] = {}  # entity id → its facts as last noted (note_facts)

    def counts(self) -> dict[str, int]:
        return {name: row_of(Count, self.conn.read(query)[0]).n for name, query in reads.COUNTS.items()}

    def find_entities(self, query: str, limit: int = 10, as_of: AsOf | int | None = None) -> list[EntityAsOf]:
        """Entities whose id, name or alias is `query`, as of the day: only those a visible chunk mentions, most
        mentioned first, with their mention and interaction counts as of that day."""
        rows = self.conn.read(reads.ENTITY_FIND, {"q": query, "limit": limit, **AsOf.of(as_of).params()})
        return rows_of(EntityAsOf, rows)

    def entity_names(self, since_ms: int | None = None) -> list[EntityName]:
        """Every entity's id, name and aliases, each alias with its first record's (day, ingested_ms): the
        resolver's name index, which applies the as-of rule to them itself. With `since_ms` (graph_clock_ms), only
        the entities whose name or aliases changed at or after it (writes.ENTITIES), each whole."""
        if since_ms is None:
            return rows_of(EntityName, self.conn.read(reads.ENTITY_NAMES))
        return rows_of(EntityName, self.conn.read(reads.ENTITY_NAMES_SINCE, {"since_ms": since_ms}))

    def graph_clock_ms(self) -> int:
        """The graph server's clock, in ms since the epoch: what the writes stamp entity names with."""
        return row_of(Count, self.conn.read(reads.GRAPH_CLOCK)[0]).n

    def entities_as_of(self, ids: list[str], as_of: AsOf | int | None = None) -> list[EntityAsOf]:
        """Those of `ids` that exist as of the day, with their popularity then (most mentioned first)."""
        if not ids:
            return []
        return rows_of(EntityAsOf, self.conn.read(reads.ENTITIES_AS_OF, {"ids": list(ids), **AsOf.of(as_of).params()}))

    def entity_profiles(self, ids: list[str]) -> list[EntityProfileRow]:
        """Per entity of `ids` in the graph: (day, ingestion day, count) cells of its mentioning
        chunks and of its interactions, from which its existence and popularity as of any day follow
        (qa/query.EntityProfile)."""
        return rows_of(EntityProfileRow, self.conn.read(reads.ENTITY_PROFILES, {"ids": list(ids)})) if ids else []

    def top_entities(self, limit: int = 10, as_of: AsOf | int | None = None) -> list[TopEntity]:
        return rows_of(TopEntity, self.conn.read(reads.TOP_ENTITIES, {"limit": limit, **AsOf.of(as_of).params()}))

    def timeline(
        self,
        entity_id: str,
        from_day: int,
        to_day: int,
        as_of: AsOf | int | None = None,
        limit: int = 1000,
        focus_day: int | None = None,
        scope: FactScope = FactScope(),
    ) -> list[TimelineRow]:
        """The entity's interactions (those `scope` counts) with event day in [from_day, to_day], as the graph stood
        at the end of the as-of day, oldest first. When more than `limit` match, the ones nearest `focus_day`
        (default: the as-of day, held inside the window) are kept, the latest report first among equals, so the
        focus day itself is never cut while farther days stay."""
        as_of = AsOf.of(as_of)
        focus = min(max(focus_day or as_of.day, from_day), to_day)
        # the day list only for a short window: the API takes any range, and a century is 36,500 days
        by_days = days_between(from_day, to_day) < reads.DAY_KEYS_MAX
        days = days_from(from_day, to_day) if by_days else []
        params = {
            "entity": entity_id,
            **reads.window_keys(entity_id, days, focus),
            "from_day": from_day,
            "to_day": to_day,
            "focus_day": focus,
            "limit": limit,
            "variant": scope.variant,
            "via_chunks": scope.via_chunks,
            "rings_for": scope.rings_for,
            "top": scope.top(limit),
            **as_of.params(),
        }
        if by_days and scope.salient and (top := self._top_of_the_day(entity_id, params)) is not None:
            return top
        return rows_of(TimelineRow, self.conn.read(reads.TIMELINE_BY_DAYS if by_days else reads.TIMELINE, params))

    def note_facts(self, entity_id: str, facts: int) -> None:
        """What the caller knows of an entity's facts (QA's resolver counts them as of the day): a timeline of an
        entity with fewer than BUSY_FACTS is read whole at once, never by bounds first."""
        if len(self._facts) >= QUIET_MAX:
            self._facts.clear()
        self._facts[entity_id] = facts

    def _top_of_the_day(self, entity_id: str, params: Params) -> list[TimelineRow] | None:
        """A bare name's k facts from its focus day by their bounds (reads.TOP_OF_THE_DAY; for an entity of more
        facts than the window's limit, reads.TOP_OF_THE_DAY_CUT), when the read proves them the k TIMELINE_BY_DAYS
        would give; else None. An entity whose day held fewer candidates than the read
        examines is left alone for QUIET_S: for it the full read costs as little, and the try is a round trip more.
        (A busy day that is not proven is tried again next time: the try costs a fraction of the full read.)"""
        now, facts = time.monotonic(), self._facts.get(entity_id)  # facts: None while the entity's count is unknown
        if self._quiet.get(entity_id, 0.0) > now or (facts is not None and facts < BUSY_FACTS):
            return None
        examine = 2 * cast(int, params["top"]) + TOP_SLACK
        crowded = facts is not None and facts > cast(int, params["limit"])
        read = reads.TOP_OF_THE_DAY_CUT if crowded else reads.TOP_OF_THE_DAY
        rows = self.conn.read(read, {**params, "examine": examine})
        if rows and rows[0]["proven"]:
            return rows_of(TimelineRow, rows)
        # No row: every fact examined was left out (not visible, or surely past the window's cut): says nothing of the
        # day's size, so the entity is tried again next time.
        if rows and cast(int, rows[0]["candidates"]) < examine:
            if len(self._quiet) >= QUIET_MAX:
                self._quiet.clear()
            self._quiet[entity_id] = now + QUIET_S
        return None

    def evidence_sources(
        self,
        ids: list[str],
        as_of: AsOf | int,
        kind: str = "interaction",
    ) -> dict[str, tuple[list[str], list[str]]]:
        """For interaction (or chunk) ids: (source names, article urls) that had reported them by the as-of day."""
        query = reads.INTERACTION_SOURCES_AS_OF if kind == "interaction" else reads.CHUNK_SOURCES_AS_OF
        rows = self.conn.read(query, {"ids": ids, **AsOf.of(as_of).params()})
        return {r.id: (sorted(r.sources), sorted(r.urls)) for r in rows_of(EvidenceSources, rows)}

    def entity_chunks(
        self, entity_id: str, from_day: int, to_day: int, as_of: AsOf | int, limit: int = 50
    ) -> list[EntityChunk]:
        rows = self.conn.read(
            reads.ENTITY_CHUNKS,
            {"entity": entity_id, "from_day": from_day, "to_day": to_day, "limit": limit, **AsOf.of(as_of).params()},
        )
        return rows_of(EntityChunk, rows)

    def entity_fact_ids(self, entity_id: str, as_of: AsOf | int, variant: Variant | None = None) -> list[str]:
        """The ids of the interactions naming the entity that are visible as of the day (any event day), of one
        variant or all."""
        params = {"entity": entity_id, "variant": variant, **AsOf.of(as_of).params()}
        return [str(row["id"]) for row in self.conn.read(reads.ENTITY_FACT_IDS, params)]

    def sources_of(self, interaction_id: str, as_of: AsOf | int | None = None) -> list[InteractionSource]:
        rows = self.conn.read(reads.INTERACTION_SOURCES, {"id": interaction_id, **AsOf.of(as_of).params()})
        return rows_of(InteractionSource, rows)

    def ingested_late(self, day: int, entity_id: str | None = None) -> LateCounts:
        """What the strict view of `day` hides: facts (interactions) and chunks published on or before it but
        ingested after its end, for one entity or the whole graph, and when the first of them was ingested."""
        params = AsOf.of(day).params()
        if entity_id:
            return row_of(LateCounts, self.conn.read(reads.LATE_FOR_ENTITY, {"entity": entity_id, **params})[0])
        return row_of(LateCounts, self.conn.read(reads.LATE_IN_GRAPH, params)[0])

    def ids(self, label: str, page: int = 10_000) -> set[str]:
        if label not in COUNTS_LABELS:
            raise ValueError(f"unknown label {label!r}")
        found: set[str] = set()
        after = ""
        query = reads.ids_page(label)  # a fixed label from COUNTS_LABELS, never user text
        while True:
            rows = rows_of(IdRow, self.conn.read(query, {"after": after, "limit": page}))
            found.update(r.id for r in rows)
            if len(rows) < page:
                return found
            after = rows[-1].id

    def interactions(self, ids: list[str]) -> list[Interaction]:
        rows = self.conn.read(reads.INTERACTIONS_BY_ID, {"ids": ids})
        return [Interaction.model_validate(r) for r in rows if r["subject_name"]]

    def chunks(self, ids: list[str]) -> list[tuple[Chunk, list[str], list[str]]]:
        """(chunk, entity ids, source ids) for the mirror."""
        # Every article and source that carried the chunk (sightings included), from the graph's edges.
        return [
            (
                chunk_of(r, r.article_ids, (r.source_names or ["unknown"])[0], (r.source_ids or ["unknown"])[0]),
                r.entity_ids,
                r.source_ids,
            )
            for r in rows_of(StoredChunk, self.conn.read(reads.CHUNKS_BY_ID, {"ids": ids}))
        ]
