"""Retrieval strategies (NEON §2.2), all as of the query day: nothing published after it, or ingested after
its end, is ever returned (in the `published` view, graph/store/asof.py: nothing published after it). Every
graph read keeps the query day in view before its limit (nearest days first).

- temporal: the entity's items of the query day ranked by similarity to the query; only when the day holds
  fewer than k, the days ±1, ±2 … ±r fill the rest, each ring ranked by similarity too;
- generic: the k items most similar to the query in the mirror (no entity filter: the reformulated query names
  the entity and its words);
- hybrid: temporal and entity-filtered semantic lists fused by reciprocal rank, then diversified (MMR);
- newsrag: the hybrid fusion over chunks (kept for the API; the NEON methods are below).
Each strategy is an object in its own module (qa/strategies/): it declares the kind of item it retrieves (newsrag:
chunks, whatever is asked) and combines the Retriever's reads below (`window`, `nearest`, `fuse`, `with_sources`).

"Similar to the query" means both forms of it (qa/similarity.py: the mean cosine to the original and the
reformulated query, or a lexical score without an embedder). One retrieval embeds the query once (hybrid's two
lists share its vector) and scores the items by the mirror's vectors of them; each evidence keeps that cosine
(Evidence.similarity) for the answer's sentence choice, which so embeds nothing again. A name alone asked the
temporal way is ranked by salience and embeds nothing at all (Retriever._by_salience).

NEON's methods (§3) are a kind of item and a variant: NewsRAG = top-k chunks, NEON(Mx) = top-k interactions
of variant Mx only, each with its own default k (METHOD_K) so prompt contexts compare; `retrieve_method`
runs one method with one strategy."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

from newskg.core.records import Variant
from newskg.core.timeaxes import shift_day
from newskg.graph.mirror.base import CHUNKS, INTERACTIONS, AsOfFilter, VectorMirror
from newskg.graph.store.asof import AsOf, days_between
from newskg.graph.store.reader import FactScope
from newskg.graph.store.rows import EntityChunk, TimelineRow
from newskg.graph.store.store import GraphStore
from newskg.qa.evidence import Evidence, EvidenceKind
from newskg.qa.fusion import mmr, rrf
from newskg.qa.query_vector import QueryVector
from newskg.qa.similarity import QueryTexts, Similarity, cosine, lexical
from newskg.qa.strategies import STRATEGIES, Request, RetrievalStrategy, Strategy, strategy_of

__all__ = ["STRATEGIES", "QueryVector", "Retriever", "Strategy"]
Method = Literal["newsrag", "m0", "m1", "m2"]
METHODS: tuple[Method, ...] = get_args(Method)
CHUNK_K, TUPLE_K = 5, 10  # NEON §4: chunks are 5-6 sentences, tuples one; these k give comparable contexts
METHOD_K: dict[Method, int] = {"newsrag": CHUNK_K, "m0": TUPLE_K, "m1": TUPLE_K, "m2": TUPLE_K}
METHOD_VARIANT: dict[Method, Variant | None] = {"newsrag": None, "m0": Variant.M0, "m1": Variant.M1, "m2": Variant.M2}
COLLECTION: dict[EvidenceKind, str] = {"interaction": INTERACTIONS, "chunk": CHUNKS}
# The payload fields a semantic hit becomes Evidence with (the whole payload also carries id lists: not read).
EVIDENCE_FIELDS = ("graph_id", "text", "event_day", "day", "published_day", "variant", "confidence")
Row = TimelineRow | EntityChunk  # a window read's row: an interaction, or a chunk (NewsRAG)


def _salience(row: Row) -> tuple[float, float]:
    """How much a fact is the day's story about its entity, for a query that is only a name ("julian assange"):
    the sources that carried it by D first, then its confidence plus how near its article's lead it is stated
    (1 in the first chunk, ½ in the next, …). Its similarity to a bare name says nothing: the name is in all.
    reads.TIMELINE orders by the same, to send only the top k (its $top); a change here is a change there
    (tests/integration/test_as_of_reads.py compares the two)."""
    if isinstance(row, EntityChunk):
        return (0.0, 0.0)
    lead = 1.0 / (1.0 + row.lead / 3) if row.lead is not None else 0.0
    return (-float(row.n_sources), -((row.confidence or 0.0) + lead))


class Retriever:
    def __init__(
        self,
        store: GraphStore,
        mirror: VectorMirror | None,
        backoff_days: int = 7,
        window_limit: int = 1000,
        facts_via_chunks: bool = True,
    ):
        self.store = store
        self.mirror = mirror
        self.backoff_days = backoff_days
        self.window_limit = window_limit  # items read per temporal window, nearest the day first
        # An entity's temporal window of facts also holds those stated by chunks that mention it (NewsRAG's scope):
        # a fact whose subject span was linked to another entity ("Google Stadia" for "Stadia") stays reachable.
        self.facts_via_chunks = facts_via_chunks
        # A query that is only a name ranks the day's facts by salience (_salience); off: by similarity, as a query
        # with topic words does (bench/replay.py measures both).
        self.bare_by_salience = True

    def retrieve(
        self,
        strategy: Strategy | RetrievalStrategy,
        entity_id: str | None,
        text: str | QueryTexts,
        as_of: AsOf | int,
        k: int,
        variant: Variant | None = None,
        kind: EvidenceKind = "interaction",
    ) -> list[Evidence]:
        """The top k as of the day. `text` is the reformulated query, or both forms (QueryTexts); `variant`
        keeps one extraction variant's interactions (chunks have none); `kind` chooses interactions or chunks,
        unless the strategy retrieves one kind only (newsrag: chunks). ValueError for an unknown strategy name."""
        chosen = strategy_of(strategy)
        kind = chosen.retrieves or kind
        as_of, query = AsOf.of(as_of), QueryTexts.of(text)
        vector = QueryVector(self.mirror, query)  # embedded when first needed, then shared by the reads below
        request = Request(entity_id, query, as_of, k, None if kind == "chunk" else variant, kind, vector)
        return chosen.retrieve(self, request)

    # --- the reads a strategy combines (qa/strategies/base.py Reads)

    def window(self, request: Request, entity_id: str, k: int) -> list[Evidence]:
        r = request
        return self.temporal(entity_id, r.query, r.as_of, k, r.variant, r.kind, r.vector)

    def nearest(self, request: Request, entity_id: str | None, k: int) -> list[Evidence]:
        r = request
        return self.semantic(COLLECTION[r.kind], r.query, r.as_of, k, entity_id, r.variant, r.vector)

    def fuse(self, request: Request, entity_id: str, temporal: list[Evidence]) -> list[Evidence]:
        """The temporal window and the 2k nearest, fused by reciprocal rank, then k of them by MMR."""
        r = request
        collection = COLLECTION[r.kind]
        semantic = self.semantic(collection, r.query, r.as_of, 2 * r.k, entity_id, r.variant, r.vector)
        pool = {e.id: e for e in semantic} | {e.id: e for e in temporal}
        scores = rrf([[e.id for e in temporal], [e.id for e in semantic]])
        order = sorted(pool, key=lambda i: (-scores[i], i))
        chosen = mmr(order, scores, self._vectors(collection, order, r.vector), r.k)
        for item in chosen:
            pool[item].score = round(scores[item], 6)
        return [pool[i] for i in chosen]

    def retrieve_method(
        self,
        method: Method,
        strategy: Literal["temporal", "generic"],
        entity_id: str | None,
        text: str | QueryTexts,
        as_of: AsOf | int,
        k: int | None = None,
    ) -> list[Evidence]:
        """One NEON method with one strategy: NewsRAG over chunks, NEON(Mx) over variant Mx's interactions; k
        defaults to the method's (METHOD_K)."""
        kind: EvidenceKind = "chunk" if method == "newsrag" else "interaction"
        return self.retrieve(strategy, entity_id, text, as_of, k or METHOD_K[method], METHOD_VARIANT[method], kind=kind)

    # --- temporal: the day first, ranked by similarity; neighbouring days only to fill k

    def temporal(
        self,
        entity_id: str,
        text: str | QueryTexts,
        as_of: AsOf | int,
        k: int,
        variant: Variant | None = None,
        kind: EvidenceKind = "interaction",
        vector: QueryVector | None = None,
    ) -> list[Evidence]:
        """One read of the widest window (nearest days first, so the day itself is never cut by its limit),
        then in memory: ring 0 (the day) ranked by similarity to the query, then ring ±1, ±2 … until k."""
        as_of, query = AsOf.of(as_of), QueryTexts.of(text)
        vector = vector or QueryVector(self.mirror, query)
        day = as_of.day
        by_salience = self.bare_by_salience and kind == "interaction" and query.name_alone
        rows = self._window(entity_id, as_of, variant, kind, k, by_salience)
        by_ring = sorted(rows, key=lambda r: days_between(_day_of(r), day))
        needed: list[list[Row]] = []
        count = 0
        for _, ring in groupby(by_ring, key=lambda r: days_between(_day_of(r), day)):
            needed.append(list(ring))
            count += len(needed[-1])
            if count >= k:
                break
        if by_salience:
            return self._by_salience(needed, k)
        scores = self._similarities(COLLECTION[kind], query, [r for ring in needed for r in ring], vector)
        chosen: list[Row] = []
        for ring in needed:
            chosen += sorted(ring, key=lambda r: (-scores[r.id], -_published(r), r.id))
        return [self._evidence(r, scores[r.id], vector.similarity(scores[r.id])) for r in chosen[:k]]

    def _by_salience(self, rings: list[list[Row]], k: int) -> list[Evidence]:
        """A name alone: each ring's facts by salience, the day's lead story first (every fact of the entity holds
        the name, so similarity to it says little). Nothing is embedded: the score is the rank's, 1 / (1 + rank),
        and the answer keeps this order (qa/answer.best_sentences)."""
        chosen = [r for ring in rings for r in sorted(ring, key=lambda r: (*_salience(r), -_published(r), r.id))]
        return [self._evidence(r, 1 / (1 + rank), None) for rank, r in enumerate(chosen[:k])]

    def _window(
        self, entity_id: str, as_of: AsOf, variant: Variant | None, kind: EvidenceKind, k: int, salient: bool
    ) -> Sequence[Row]:
        """The rows ranked: the window's nearest rings that hold k, or (`salient`) only the k of them _by_salience
        keeps, chosen by the graph in the same order (reads.TIMELINE's $top)."""
        day = as_of.day
        if kind == "chunk":  # chunks are dated by publication: the window ends at the day, newest first
            return self.store.entity_chunks(
                entity_id, shift_day(day, -self.backoff_days), day, as_of, limit=self.window_limit
            )
        return self.store.timeline(
            entity_id,
            shift_day(day, -self.backoff_days),
            shift_day(day, self.backoff_days),
            as_of=as_of,
            limit=self.window_limit,
            focus_day=day,
            scope=FactScope(variant, via_chunks=self.facts_via_chunks, rings_for=k, salient=salient),
        )

    def _similarities(
        self, collection: str, query: QueryTexts, rows: Sequence[Row], vector: QueryVector
    ) -> dict[str, float]:
        """Each row's similarity to the query: cosine to the mirror's vector of it (embedded here when the mirror
        lacks it, e.g. not yet synced); lexical without a mirror."""
        if not rows:
            return {}
        if self.mirror is None:
            return dict(zip([r.id for r in rows], lexical(query, [r.text for r in rows]), strict=True))
        ids = [r.id for r in rows]
        stored = vector.stored(collection, ids)
        missing = [r for r in rows if r.id not in stored]
        if missing:  # not mirrored yet: embedded here, the only evidence a request embeds (for its score only)
            embedded = np.asarray(self.mirror.embedder.embed([r.text for r in missing]), dtype=np.float32)
            stored |= dict(zip([r.id for r in missing], embedded, strict=True))
        return dict(zip(ids, cosine(vector(), [stored[i] for i in ids]), strict=True))

    @staticmethod
    def _evidence(row: Row, score: float, similarity: Similarity | None) -> Evidence:
        if isinstance(row, EntityChunk):
            return Evidence(row.id, "chunk", row.text, row.day, row.day, round(score, 6), similarity=similarity)
        return Evidence(
            row.id,
            "interaction",
            row.text,
            row.event_day,
            row.published_day,
            round(score, 6),
            sorted(row.sources),
            sorted(row.urls),
            row.variant,
            row.confidence,
            similarity,
        )

    # --- semantic: the mirror

    def semantic(
        self,
        collection: str,
        text: str | QueryTexts,
        as_of: AsOf | int,
        k: int,
        entity_id: str | None,
        variant: Variant | None = None,
        vector: QueryVector | None = None,
    ) -> list[Evidence]:
        if self.mirror is None:
            return []
        as_of, query = AsOf.of(as_of), QueryTexts.of(text)
        vector = vector or QueryVector(self.mirror, query)
        if entity_id and collection == INTERACTIONS and self.mirror.scans_filters:
            scored = self._entity_facts_nearest(vector, entity_id, as_of, k, variant)
        else:
            # The same as-of bounds as reads.visible(), on the mirror's copy of the graph's time payload; each
            # mirror adapter translates them to its engine's filter. The hits' vectors come along for MMR.
            where = AsOfFilter(day=as_of.day, ingested_ms=as_of.ms, entity_id=entity_id, variant=variant)
            hits = self.mirror.search_vector(collection, vector().tolist(), where, k, EVIDENCE_FIELDS, True)
            vector.remember(collection, {h.graph_id: h.vector for h in hits if h.vector is not None})
            scored = [(hit.payload, hit.score) for hit in hits]
        kind: EvidenceKind = "interaction" if collection == INTERACTIONS else "chunk"
        return [
            Evidence(
                payload["graph_id"],
                kind,
                payload["text"],
                int(payload.get("event_day", payload.get("day", 0))),
                int(payload.get("published_day", payload.get("day", 0))),
                score,
                variant=payload.get("variant"),
                confidence=payload.get("confidence"),
                similarity=vector.similarity(score),
            )
            for payload, score in scored
        ]

    def _entity_facts_nearest(
        self, vector: QueryVector, entity_id: str, as_of: AsOf, k: int, variant: Variant | None
    ) -> list[tuple[dict[str, Any], float]]:
        """The mirror's entity-filtered search, exactly, where the mirror tests every point's payload in Python
        (qdrant-client's local mode, `scans_filters`: seconds per query at 1 M points): the candidates are the
        entity's facts visible as of the day, read from the graph by adjacency (the same bounds as the mirror's
        filter, whose time payload equals the graph's), ranked by cosine to the mirror's vectors of them; facts not
        yet mirrored are left out, as the mirror's search leaves them. Cost grows with the entity's facts, not the
        collection."""
        assert self.mirror is not None
        stored = vector.stored(INTERACTIONS, self.store.entity_fact_ids(entity_id, as_of, variant))
        if not stored:
            return []
        ids = sorted(stored)
        scores = dict(zip(ids, cosine(vector(), [stored[i] for i in ids]), strict=True))
        best = sorted(ids, key=lambda i: (-scores[i], i))[:k]
        payloads = {str(p["graph_id"]): p for p in self.mirror.payloads(INTERACTIONS, best)}
        return [(payloads[i], scores[i]) for i in best if i in payloads]

    def _vectors(self, collection: str, ids: list[str], vector: QueryVector) -> dict[str, npt.NDArray[np.float32]]:
        if self.mirror is None or not ids:
            return {}
        return vector.stored(collection, ids)

    def with_sources(self, found: list[Evidence], as_of: AsOf) -> list[Evidence]:
        for kind in ("interaction", "chunk"):
            ids = [e.id for e in found if e.kind == kind]
            if not ids:
                continue
            sources = self.store.evidence_sources(ids, as_of, kind)
            for e in found:
                if e.kind == kind and e.id in sources:
                    e.sources, e.urls = list(sources[e.id][0]), list(sources[e.id][1])
        return found


def _day_of(row: Row) -> int:
    """The day a row is about: an interaction's event day, a chunk's publication day."""
    return row.event_day if isinstance(row, TimelineRow) else row.day


def _published(row: Row) -> int:
    return row.published_day if isinstance(row, TimelineRow) else row.day
