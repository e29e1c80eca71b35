"""Issue #30, on the real FalkorDB: the QA resolver's name index is read whole once, then refreshed with only the
entities whose names were stamped since its last read (writes.ENTITIES, reads.ENTITY_NAMES_SINCE), and the
refreshed copy equals a whole rebuild. What a refresh brings in still resolves only as of the days it is visible."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from newskg.core.ids import chunk_id
from newskg.core.records import Chunk, Entity
from newskg.core.timeaxes import end_of_day_ms
from newskg.graph.store import reads
from newskg.graph.store.asof import AsOf
from newskg.graph.store.rows import AliasSeen
from newskg.graph.store.store import GraphStore
from newskg.qa import query
from newskg.qa.query import EntityResolver, _NameIndex
from newskg.wiring import open_graph
from tests.support.isolation import Isolation
from tests.support.records import dated_chunk

pytestmark = pytest.mark.integration

DAY10, DAY20 = 20230710, 20230720
TWITTER, MUSK, DORSEY = "e_twitter", "e_musk", "e_dorsey"


def record(entity_id: str, name: str, aliases: list[str], day: int, spelled: bool = True) -> Entity:
    """An entity record as the linker makes it for a chunk of `day`, ingested an hour before the day ends."""
    return Entity(id=entity_id, name=name, type="ORG", aliases=aliases, seen=(day, end_of_day_ms(day) - 3_600_000))


def report(text: str, day: int) -> Chunk:
    return dated_chunk(text, day, "wire", article=f"a_{chunk_id(text)[2:12]}")


def mentioned(store: GraphStore, day: int, *entities: Entity) -> None:
    """The entities' records, and a chunk of `day` that mentions them (what makes an entity exist as of a day)."""
    chunk = report(" and ".join(e.name for e in entities) + f" in the news of {day}.", day)
    store.write_batch(chunks=[chunk], entities=list(entities), mentions=[(chunk.id, e.id) for e in entities])


@pytest.fixture
def store(stack, tmp_path_factory) -> Iterator[GraphStore]:
    with Isolation(stack, tmp_path_factory.mktemp("names")) as isolation:
        store = GraphStore(open_graph(isolation.new().settings))
        store.init()
        try:
            yield store
        finally:
            store.conn.drop()
            store.conn.close()


class NameReads:
    """The name reads a store's connection answers: (statement, parameters, ids read)."""

    def __init__(self, store: GraphStore):
        self.seen: list[tuple[str, dict[str, Any], set[str]]] = []
        read = store.conn.read

        def recorded(statement: str, params: dict[str, Any] | None = None) -> Any:
            rows = read(statement, params)
            if statement in (reads.ENTITY_NAMES, reads.ENTITY_NAMES_SINCE):
                self.seen.append((statement, params or {}, {str(row["id"]) for row in rows}))
            return rows

        store.conn.read = recorded  # pyright: ignore[reportAttributeAccessIssue]  # the instance's, this test's


def test_names_written_after_the_first_load_come_in_by_a_refresh_that_reads_only_them(store, monkeypatch):
    """The first load reads every entity; a refresh reads only those whose names changed since (a new entity, an
    entity with a new alias), and what it brings resolves as of the days it is visible, never before."""
    monkeypatch.setattr(query, "NAMES_MARGIN_MS", 0)  # no re-read of the last minute: exactly what changed
    mentioned(store, DAY10, record(TWITTER, "Twitter", ["Twitter"], DAY10), record(MUSK, "Elon Musk", [], DAY10))
    names = NameReads(store)
    resolver = EntityResolver(store, refresh_s=3600)
    assert resolver.find("bluebird corp payments", AsOf(DAY20))[2][0] is None  # the first load: nobody has it
    assert [(s, ids) for s, _, ids in names.seen] == [(reads.ENTITY_NAMES, {TWITTER, MUSK})]
    time.sleep(0.01)  # a stamp after the first read's clock (ms)
    mentioned(
        store, DAY20, record(TWITTER, "Twitter", ["Bluebird Corp"], DAY20), record(DORSEY, "Jack Dorsey", [], DAY20)
    )
    resolver.refresh_s = 0.0  # stale: the next ask refreshes
    mention, topic, (best, _) = resolver.find("bluebird corp payments", AsOf(DAY20))
    assert (mention, topic, best and best.id) == ("bluebird corp", "payments", TWITTER)
    statement, params, ids = names.seen[1]  # the first refresh (refresh_s 0: every ask after it refreshes too)
    assert (statement, ids) == (reads.ENTITY_NAMES_SINCE, {TWITTER, DORSEY})  # not Musk: unchanged
    assert params["since_ms"] > 0 and all(not ids for _, _, ids in names.seen[2:])
    # as of day 10 the alias is no name yet (the words stay the mention) and Jack Dorsey does not exist
    mention, topic, (best, _) = resolver.find("bluebird corp payments", AsOf(DAY10))
    assert (topic, best) == ("", None)
    assert resolver.resolve("Jack Dorsey", AsOf(DAY10))[0] is None
    assert resolver.resolve("Jack Dorsey", AsOf(DAY20))[0].id == DORSEY  # pyright: ignore[reportOptionalMemberAccess]
    index = resolver._current()
    reads_before = len(names.seen)
    again = index.refreshed(store)  # nothing changed since: the copy shares every table
    assert len(names.seen) == reads_before + 1 and names.seen[-1][2] == set()
    assert again.keys is index.keys and again.names is index.names and again.words is index.words


def test_a_rename_takes_the_old_name_out_of_the_index(store, monkeypatch):
    """An entity's name is its earliest-visible record's spelling: a record of an earlier day renames it, and a
    refresh puts the new name in place of the old (entities are never deleted nor merged). No margin: the rename
    must stamp the entity, or the refresh would not read it."""
    monkeypatch.setattr(query, "NAMES_MARGIN_MS", 0)
    mentioned(store, DAY20, record(TWITTER, "Twitter Inc", [], DAY20))
    resolver = EntityResolver(store, refresh_s=3600)
    assert "Twitter Inc" in resolver._current().names
    time.sleep(0.01)  # a stamp after the first read's clock (ms)
    mentioned(store, DAY10, record(TWITTER, "Twitter", [], DAY10))
    resolver.refresh_s = 0.0
    index = resolver._current()
    assert index.names.get("Twitter") == [TWITTER] and "Twitter Inc" not in index.names
    assert "twitter inc" not in index.keys
    assert same(index, _NameIndex.read(store))


def test_a_stamp_older_than_the_cursor_is_read_by_the_next_whole_read(store, monkeypatch):
    """A name change stamped before a refresh's cursor (on Neo4j, a transaction committed long after its statement
    ran) is missed by the refreshes, and read by the whole read every NAMES_REREAD_S."""
    monkeypatch.setattr(query, "NAMES_MARGIN_MS", 0)
    resolver = EntityResolver(store, refresh_s=0.0)
    resolver._current()
    mentioned(store, DAY10, record(DORSEY, "Jack Dorsey", [], DAY10))
    store.conn.run("MATCH (e:Entity {id: $id}) SET e.names_ms = 0", {"id": DORSEY})  # as if committed late
    assert "Jack Dorsey" not in resolver._current().names
    monkeypatch.setattr(query, "NAMES_REREAD_S", 0.0)
    assert "Jack Dorsey" in resolver._current().names


WORDS = ("Columbus", "Acme", "Doja", "Nova", "Taylor")
SECOND = ("Police", "Cat", "Times", "Swift")
ENDS = ("", " Department", " Inc")


def random_record(rng: random.Random, entity_id: str) -> Entity:
    """A name of a small vocabulary (names share keys and leading words), shown as an alias with up to two others
    (as the linker records a spelling), on an early or late day."""

    def name() -> str:
        return f"{rng.choice(WORDS)} {rng.choice(SECOND)}{rng.choice(ENDS)}"

    day, spelled = rng.choice((DAY10, DAY20, 20230715, 20230701)), name()
    return Entity(
        id=entity_id,
        name=spelled,
        type="ORG",
        aliases=[spelled, *(name() for _ in range(rng.randrange(3)))],
        seen=(day, end_of_day_ms(day) - rng.randrange(1, 86_400_000)),
    )


def test_the_refreshed_index_equals_a_whole_rebuild_over_rounds_of_random_writes(store, monkeypatch):
    """New entities, new aliases, re-dated aliases and renames (an earlier record's spelling), round after round:
    after each refresh the index is what a whole read of the graph builds. No margin: each change must stamp its
    entity, or the refresh would not read it."""
    monkeypatch.setattr(query, "NAMES_MARGIN_MS", 0)
    rng = random.Random(30)
    resolver = EntityResolver(store, refresh_s=0.0)
    before, renamed, redated = resolver._current(), 0, 0
    for _ in range(6):
        time.sleep(0.01)  # the round's stamps after the last refresh's clock (ms)
        written = [random_record(rng, f"e_{rng.randrange(20)}") for _ in range(rng.randrange(5, 25))]
        store.write_batch(entities=written)
        index = resolver._current()
        assert same(index, _NameIndex.read(store))
        kept = [(before.records[i], record) for i, record in index.records.items() if i in before.records]
        renamed += sum(old[0] != new[0] for old, new in kept)
        redated += sum(_redated(old[1], new[1]) for old, new in kept)
        before = index
    assert renamed and redated  # the rounds did rename entities and re-date aliases, not only add


def _redated(old: tuple[AliasSeen, ...], new: tuple[AliasSeen, ...]) -> int:
    """How many aliases carry other times in `new` than in `old`."""
    times = {alias: (day, ms) for alias, day, ms in old}
    return sum(alias in times and times[alias] != (day, ms) for alias, day, ms in new)


def same(index: _NameIndex, whole: _NameIndex) -> bool:
    """The two indexes answer alike: the same records, keys, leading words and names (ids in any order), and fuzzy
    matching finds the same names (a renamed-away name left in the fuzzy copy names nothing)."""
    assert index.records == whole.records
    assert normal(index.keys) == normal(whole.keys) and normal(index.prefixes) == normal(whole.prefixes)
    assert {n: sorted(ids) for n, ids in index.names.items()} == {n: sorted(ids) for n, ids in whole.names.items()}
    for mention in ("columbus police", "doja", "acme times inc", "nova swfit"):
        hits = {name: score for name, score in index.fuzzy.hits(mention).items() if name in index.names}
        assert hits == whole.fuzzy.hits(mention)
    return True


def normal(table: dict[str, query.Forms]) -> dict[str, dict[str, Any]]:
    """Each key's entries with their alias times in order (two builds may list them in another)."""
    return {
        key: {e: None if seen is None else sorted(seen) for e, seen in forms.items()} for key, forms in table.items()
    }


def test_init_stamps_the_entities_of_a_graph_written_before_the_stamps(store):
    """An older graph has no names_ms and no index on it: init gives every entity 0 (older than any refresh's
    cursor) before it makes the index, and a refresh after reads only what was written since."""
    mentioned(store, DAY10, record(TWITTER, "Twitter", ["Twitter"], DAY10), record(MUSK, "Elon Musk", [], DAY10))
    stamps = "MATCH (e:Entity) RETURN e.id AS id, e.names_ms AS ms ORDER BY id"
    store.conn.run("MATCH (e:Entity) SET e.names_ms = null")
    store.conn.run("DROP INDEX FOR (n:Entity) ON (n.names_ms)")
    assert [r["ms"] for r in store.conn.read(stamps)] == [None, None]
    assert "CREATE INDEX FOR (n:Entity) ON (n.names_ms)" in store.init()
    assert store.conn.read(stamps) == [{"id": MUSK, "ms": 0}, {"id": TWITTER, "ms": 0}]
    assert store.init() == []
    index = _NameIndex.read(store)
    assert set(index.records) == {TWITTER, MUSK}
    mentioned(store, DAY20, record(DORSEY, "Jack Dorsey", [], DAY20))
    assert {row.id for row in store.entity_names(index.since_ms)} == {DORSEY}
    assert set(index.refreshed(store).records) == {TWITTER, MUSK, DORSEY}
