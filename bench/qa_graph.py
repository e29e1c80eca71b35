"""The QA bench's synthetic graph: N interactions with proportional chunks, articles and entities (issue 30), the
same for every run of a size.

- Entities: N / FACTS_PER_ENTITY ("Entity 0" … ), of Zipf popularity (exponent POPULARITY): rank r is drawn in
  proportion to (r + 1) ** -POPULARITY, so a few hubs take part in a large share of the facts (at 1 M the busiest
  has tens of thousands, as a head-of-state does in real news) and most entities in a handful.
- Chunks: N / FACTS_PER_CHUNK, each published on one of DAYS days (round robin) in an article of its own pair
  (CHUNKS_PER_ARTICLE to an article, SOURCES sources), and stating FACTS_PER_CHUNK facts among ENTITIES_PER_CHUNK
  entities drawn by popularity; it MENTIONS them. Each fact has an EVIDENCE edge to its chunk, and an ABOUT edge to
  each entity of its chunk it does not name, so the QA default (`facts_via_chunks`: an entity's facts include those
  stated by a chunk that mentions it) reads real chunks.
- Chunks, articles, sources and mentions go through the store's own statements (writes.ARTICLES, CHUNKS,
  MENTIONS), without the write path's recount of the daily mention counts (graph/store/mentions.py), which walks a
  hub's every mention on each batch. The interactions go through BULK_INTERACTIONS: the shape of
  writes.INTERACTIONS in one CREATE per row. Once all is loaded, the daily mention and fact counts (EntityDay,
  FactDay: what the QA resolver's profiles read) are counted for the whole graph at once (build_counts), as the
  write path would have left them (tests/integration/test_bench_qa.py proves both equal).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from bench.synthetic import interaction_between, one_sentence_chunk
from newskg.core.ids import entity_id
from newskg.core.records import Chunk, Entity, Interaction
from newskg.core.settings import Settings
from newskg.core.timeaxes import day_iso
from newskg.graph.connection import GraphConnection
from newskg.graph.store import factbounds, factdays, mentions, writes
from newskg.graph.store.writer import interaction_first_key
from newskg.wiring import open_graph

DAYS = 90
FACTS_PER_CHUNK = 5
FACTS_PER_ENTITY = 10  # entities = interactions / 10
ENTITIES_PER_CHUNK = 4
CHUNKS_PER_ARTICLE = 2
SOURCES = 50
POPULARITY = 0.8  # Zipf exponent: at 1 M the busiest entity takes part in ~2 % of the facts
CHUNK_BATCH = 1000  # chunks per statement (so FACTS_PER_CHUNK × as many interactions)
# Which of a chunk's entities each of its facts pairs: every entity takes part, the first in most.
PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (2, 3))
assert len(PAIRS) == FACTS_PER_CHUNK and {i for pair in PAIRS for i in pair} == set(range(ENTITIES_PER_CHUNK))

# writes.INTERACTIONS for rows that are new: the same properties and edges (OBJECT, EVIDENCE and ABOUT included),
# in one CREATE per row instead of MERGE + FOREACH + OPTIONAL MATCH (a fresh graph of unique ids; the unique
# constraint on Interaction.id still guards it). A fact has one chunk here (bulk_row), whose mentions are written
# before it (load_graph): one ABOUT edge to each other entity the chunk mentions. Its cells are counted after the
# load (build_counts), so its mark `counted` says so already, as factdays.RECOUNT_FACT_DAYS would leave it.
BULK_INTERACTIONS = """
UNWIND $rows AS i
MATCH (s:Entity {id: i.subject_id})
MATCH (o:Entity {id: i.object_id})
MATCH (ch:Chunk {id: i.chunk_id})
CREATE (s)-[:SUBJECT_OF]->(x:Interaction {id: i.id, text: i.text, event_day: i.event_day, event_iso: i.event_iso,
  variant: i.variant, subject_id: i.subject_id, object_id: i.object_id, published_day: i.published_day,
  published_iso: i.published_iso, ingested_ms: i.ingested_ms, ingested_at: i.ingested_at, first_key: i.first_key,
  subject_day: s.id + '|' + toString(i.event_day), object_day: o.id + '|' + toString(i.event_day),
  ingested_day: i.ingested_day, subject_cell: i.subject_cell, object_cell: i.object_cell,
  counted: i.counted})
CREATE (x)-[:OBJECT]->(o)
CREATE (x)-[:EVIDENCE]->(ch)
WITH x, ch, s, o, i
MATCH (ch)-[:MENTIONS]->(m:Entity)
WHERE m <> s AND m <> o
CREATE (x)-[:ABOUT {key: m.id + '|' + toString(i.event_day)}]->(m)
"""


def entity_count(rows: int) -> int:
    return max(ENTITIES_PER_CHUNK, rows // FACTS_PER_ENTITY)


@cache
def entities(rows: int) -> tuple[Entity, ...]:
    """The graph's entities, most popular first."""
    return tuple(
        Entity(id=entity_id(f"Entity {k}", "PERSON"), name=f"Entity {k}", type="PERSON")
        for k in range(entity_count(rows))
    )


def chunk_day(n: int) -> int:
    """The n-th chunk's day: round robin over DAYS days of 2023 from January 1, 28 to a month (every key a real
    date; the bench's questions ask about January to March)."""
    d = n % DAYS
    return 20230101 + d // 28 * 100 + d % 28


@dataclass(frozen=True)
class Batch:
    """CHUNK_BATCH chunks (the last batch fewer), the facts they state and what each mentions."""

    chunks: list[Chunk]
    facts: list[Interaction]
    mentions: dict[str, list[str]]  # chunk id → entity ids


def _popular(rng: np.random.Generator, n_entities: int, shape: tuple[int, ...]) -> np.ndarray[Any, Any]:
    """Entity ranks drawn by Zipf popularity, each row of the last axis distinct."""
    weights = np.arange(1, n_entities + 1, dtype=np.float64) ** -POPULARITY
    cumulative = np.cumsum(weights / weights.sum())
    ranks = np.minimum(np.searchsorted(cumulative, rng.random(shape)), n_entities - 1)
    for column in range(1, shape[-1]):  # a repeat within a chunk moves to the next rank not yet in it
        for _ in range(shape[-1]):
            repeated = (ranks[..., :column] == ranks[..., column : column + 1]).any(axis=-1)
            if not repeated.any():
                break
            ranks[repeated, column] = (ranks[repeated, column] + 1) % n_entities
    return ranks


def batches(rows: int) -> Iterator[Batch]:
    """The graph of `rows` interactions, CHUNK_BATCH chunks at a time (rows / FACTS_PER_CHUNK chunks, the last
    stating what remains)."""
    people = entities(rows)
    rng = np.random.default_rng(11)
    n_chunks = -(-rows // FACTS_PER_CHUNK)
    for start in range(0, n_chunks, CHUNK_BATCH):
        stop = min(start + CHUNK_BATCH, n_chunks)
        ranks = _popular(rng, len(people), (stop - start, ENTITIES_PER_CHUNK))
        chunks, facts, mentions = [], [], {}
        for n, chunk_ranks in zip(range(start, stop), ranks.tolist(), strict=True):
            chunk, stated = _chunk(n, [people[r] for r in chunk_ranks], rows - n * FACTS_PER_CHUNK)
            chunks.append(chunk)
            facts += stated
            mentions[chunk.id] = sorted({e for f in stated for e in (f.subject_id, f.object_id)})
        yield Batch(chunks, facts, mentions)


def _chunk(n: int, cast: list[Entity], left: int) -> tuple[Chunk, list[Interaction]]:
    """The n-th chunk, in article n // CHUNKS_PER_ARTICLE of source article % SOURCES, and the facts it states
    (at most `left`)."""
    day = chunk_day(n)
    text = f"{cast[0].name} and {cast[1].name} in story {n}. {cast[2].name} and {cast[3].name} also appear."
    article = n // CHUNKS_PER_ARTICLE
    chunk = one_sentence_chunk(n, text, day).model_copy(
        update={
            "article_id": f"a_bench_{article}",
            "article_ids": [f"a_bench_{article}"],
            "source": f"Source {article % SOURCES}",
            "source_id": f"s_bench_{article % SOURCES}",
            "url": f"https://bench.invalid/{article}",
        }
    )
    facts = [
        interaction_between(
            cast[a], cast[b], f"{cast[a].name} met {cast[b].name} about matter {n}.{j}", day, chunk_ids=[chunk.id]
        )
        for j, (a, b) in enumerate(PAIRS[: min(FACTS_PER_CHUNK, left)])
    ]
    return chunk, facts


def interactions(rows: int) -> Iterator[Interaction]:
    for batch in batches(rows):
        yield from batch.facts


def write_bulk(conn: GraphConnection, facts: list[Interaction]) -> None:
    """The facts by BULK_INTERACTIONS, then their salience bounds, as the store's batches set them."""
    conn.run(BULK_INTERACTIONS, {"rows": [bulk_row(i) for i in facts]})
    for statement, params in factbounds.recount_statements([i.id for i in facts], []):
        conn.run(statement, params)


def bulk_row(i: Interaction) -> dict[str, Any]:
    """The row BULK_INTERACTIONS writes: what the store's write path stores of an interaction, and its chunk."""
    return {
        "id": i.id,
        "text": i.text,
        "event_day": i.event_day,
        "event_iso": day_iso(i.event_day),
        "variant": i.variant,
        "subject_id": i.subject_id,
        "object_id": i.object_id,
        "published_day": i.published_day,
        "published_iso": day_iso(i.published_day),
        "ingested_ms": i.ingested_ms,
        "ingested_at": i.ingested_at,
        "first_key": interaction_first_key(i),
        "chunk_id": i.chunk_ids[0],
        **_cells(i),
    }


def _cells(i: Interaction) -> dict[str, Any]:
    """An interaction's ingestion day and cell keys in the daily fact counts, as writes.INTERACTIONS sets them."""
    day = mentions.ingested_day(i.ingested_ms)
    return {
        "ingested_day": day,
        "subject_cell": f"{i.subject_id}|{i.published_day}|{day}",
        "object_cell": f"{i.object_id}|{i.published_day}|{day}",
        "counted": f"{i.published_day}|{day}|2",  # both cells (a bench fact always has its object)
    }


def build_counts(conn: GraphConnection) -> float:
    """The daily mention and fact counts of the whole graph, as the write path leaves them; the seconds taken."""
    start = time.perf_counter()
    conn.run_many(
        [(mentions.COUNT_ALL_ENTITY_DAYS, {}), (mentions.MARK_ALL_COUNTED, {}), (factdays.COUNT_ALL_FACT_DAYS, {})]
        + [(statement, {}) for statement in factdays.COUNT_ALL_ENTITY_FACTS]
    )
    return time.perf_counter() - start


def progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=console,
    )


@dataclass(frozen=True)
class Loaded:
    """What load_graph made: the questions the bench asks (`asked`); how many facts the busiest entity takes part
    in; the seconds the load took, and of them the seconds of the daily counts (build_counts)."""

    asked: list[tuple[str, str]]
    hub_facts: int
    seconds: float
    count_seconds: float = 0.0


def asked_of(batch: Batch) -> list[tuple[str, str]]:
    """The questions a batch's chunks make: per chunk, one of the entities it states facts about (in turn), on the
    chunk's day — people ask about who is in the news when they are, so questions follow popularity (a hub is
    asked about as often as it is written about) and each question's entity is known as of its day."""
    found = []
    for n, chunk in enumerate(batch.chunks):
        fact = batch.facts[min(n * FACTS_PER_CHUNK, len(batch.facts) - 1)]
        name = fact.subject_name if n % 2 == 0 else fact.object_name
        found.append((name, day_iso(chunk.day)))
    return found


def load_graph(settings: Settings, rows: int, console: Console) -> Loaded:
    """A fresh graph with the schema of `newskg graph init`, the entities by the store, then each batch's articles,
    chunks and mentions by the store's statements and its interactions by BULK_INTERACTIONS."""
    from newskg.graph.store.store import GraphStore

    people = entities(rows)
    store = GraphStore(open_graph(settings))
    store.conn.drop()
    store.init()
    store.write_batch(entities=list(people))
    degree: dict[str, int] = {}
    asked: list[tuple[str, str]] = []
    start = time.perf_counter()
    with progress(console) as bar:
        task = bar.add_task("graph: interactions, chunks", total=rows, rate="")
        for batch in batches(rows):
            # articles, sources, chunks: their mention recount finds no MENTIONS yet (they follow, without one)
            store.write_batch(chunks=batch.chunks)
            mention_rows = [{"chunk_id": c, "entity_ids": ids} for c, ids in batch.mentions.items()]
            store.conn.run(writes.MENTIONS, {"rows": mention_rows})
            write_bulk(store.conn, batch.facts)
            asked += asked_of(batch)
            for i in batch.facts:
                for e in (i.subject_id, i.object_id):
                    degree[e] = degree.get(e, 0) + 1
            done = bar.tasks[task].completed + len(batch.facts)
            bar.update(task, completed=done, rate=f"{done / (time.perf_counter() - start):,.0f} rows/s")
    counting = build_counts(store.conn)
    store.conn.close()
    return Loaded(asked, max(degree.values(), default=0), time.perf_counter() - start, counting)
