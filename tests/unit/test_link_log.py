"""The linking log (extract/entities/link_log.py): extract replicas share their alias index by applying each other's
chunk journals. Those arrive in another order than they were linked in (and a restart replays the graph's in yet
another), so the index must end the same whatever the order; each journal is applied once; a bad entry is skipped;
and the stage puts on the log exactly the journals of the chunks its batch wrote. The broker and the graph are
stand-ins here (tests/integration/test_scale_out.py runs three replicas on the real ones)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from newskg.core.records import Chunk, IndexOp, LinkingEntry, LinkJournal
from newskg.evaluation.neoqa.generate import generate
from newskg.extract.chunk_extractor import ChunkExtractor
from newskg.extract.entities.alias_index import AliasIndex
from newskg.extract.entities.journal import ArticleMemory, journal_id, replay_all
from newskg.extract.entities.link_log import apply_entry, entry
from newskg.extract.entities.linker import Linker
from newskg.extract.stage import ExtractOptions, ExtractStage
from newskg.graph.store import journals, reads
from tests.support.records import linking_chunk, linking_stream
from tests.unit.test_link_transactions import Graph, full_state, records, undisturbed


def synthetic_chunks(events: int = 3, seed: int = 5) -> list[Chunk]:
    """The chaos stream's story (`ingest synthetic --timelines 1 --events 3 --seed 5`), a chunk per paragraph,
    ingested in publication order: many chunks naming the same few people, places and works."""
    articles = sorted(generate(1, seed, events=events, ablation=False).articles, key=lambda a: (a.date, a.article_id))
    chunks = []
    for n, article in enumerate(articles):
        day = int(article.date.replace("-", ""))
        for p, text in enumerate(t for t in article.body().split("\n\n") if t.strip()):
            chunks.append(linking_chunk(text, day, article.article_id, f"c{n}-{p}", ingested_ms=1000 * (n + 1) + p))
    return chunks


def index_state(linker: Linker) -> dict[str, Any]:
    """full_state without the article memories' recency order (a replica's LRU: not linking state)."""
    state = full_state(linker)
    state["articles"] = dict(state["articles"])
    return state


def shuffled_keeping_articles(
    items: list[tuple[str, LinkJournal]], rng: random.Random
) -> list[tuple[str, LinkJournal]]:
    """Another interleaving of the journals that keeps each article's in the order they were linked (one article's
    chunks come from one partition, and the log has one partition)."""
    queues: dict[str, list[tuple[str, LinkJournal]]] = {}
    for item in items:
        queues.setdefault(item[1].article_id, []).append(item)
    out = []
    while queues:
        article = rng.choice(sorted(queues))
        out.append(queues[article].pop(0))
        if not queues[article]:
            del queues[article]
    return out


def linked_journals(chunks: list[Chunk]) -> list[tuple[str, LinkJournal]]:
    linker = Linker(AliasIndex())
    extractions = [x for x, _ in ChunkExtractor(linker).link(chunks)]
    return [(journal_id(x.chunk), x.journal) for x in extractions if x.journal is not None]


def applied(items: list[tuple[str, LinkJournal]]) -> Linker:
    linker = Linker(AliasIndex())
    for key, journal in items:
        assert apply_entry(linker, LinkingEntry(journal_id=key, chunk_id=key, journal=journal).to_bytes())
    return linker


@pytest.fixture(scope="module")
def story() -> list[tuple[str, LinkJournal]]:
    return linked_journals(synthetic_chunks())


def test_the_index_ends_the_same_whatever_order_the_journals_arrive_in(story):
    """Replicas apply each other's journals as the log delivers them, a restart replays the graph's by their
    wall-clock order: the same journals in any interleaving give the same index (names, types, keys, acronyms,
    surnames, fuzzy tables, alias edges, votes, context, article memories)."""
    assert len(story) > 60
    expected = index_state(applied(story))
    rng = random.Random(29)
    for _ in range(4):
        assert index_state(applied(shuffled_keeping_articles(story, rng))) == expected


def test_spellings_and_types_met_in_either_order_give_one_name_type_and_tables():
    """The earliest-seen spelling names the entity, whichever came first; its type moves the fuzzy table entries,
    acronym and surname with it, and every spelling stays a key."""
    index_a, index_b = AliasIndex(), AliasIndex()
    adds = [("e1", "Korvan Holdings", "ORG", (20230502, 20)), ("e1", "KORVAN HOLDINGS", "PERSON", (20230501, 30))]
    for eid, name, kind, seen in adds:
        index_a.add(eid, name, kind, seen=seen)
    for eid, name, kind, seen in reversed(adds):
        index_b.add(eid, name, kind, seen=seen)
    for index in (index_a, index_b):
        entity = index.entities["e1"]
        assert (entity.name, entity.type) == ("KORVAN HOLDINGS", "PERSON")
        assert index.lookup_ids("korvan holdings") == ["e1"]
        assert "kh" not in index._by_acronym and "holdings" in index._person_parts
        assert set(index._keys_by_type) == {"PERSON"}
    assert index_state(Linker(index_a)) == index_state(Linker(index_b))


def test_alias_edges_learnt_in_either_order_break_a_cycle_at_its_latest_edge():
    for order in ([("a", "b", (1, 1)), ("b", "a", (2, 2))], [("b", "a", (2, 2)), ("a", "b", (1, 1))]):
        index = AliasIndex()
        for source, target, seen in order:
            index.merge(source, target, seen)
        assert index.canonical("a") == index.canonical("b") == "b"  # b → a came later: not followed
        assert index.canonical("a", as_of=(1, 5)) == "b" and index.canonical("b", as_of=(1, 5)) == "b"


def test_a_journal_is_applied_once_whoever_delivers_it(story):
    key, journal = story[0]
    linker = applied([(key, journal)])
    before = index_state(linker)
    value = LinkingEntry(journal_id=key, chunk_id="c", journal=journal).to_bytes()
    assert not apply_entry(linker, value)  # the log delivers it again (a re-append, another replica's copy)
    assert index_state(linker) == before


def test_a_bad_entry_is_skipped_and_leaves_nothing_behind(story):
    linker = applied(story[:3])
    before = index_state(linker)
    broken = LinkJournal(
        article_id="a9",
        seen=(20330301, 5),
        context=[],
        ops=[
            IndexOp(op="add", entity_id="e_new", text="Someone", kind="PERSON"),
            IndexOp(op="alias", entity_id="e_gone", text="X"),
        ],
        memory=ArticleMemory(),
    )
    assert not apply_entry(linker, b'{"kind": "LinkingEntry", "journal_id": 1}')
    assert not apply_entry(linker, b"\xff")
    assert not apply_entry(linker, None)  # a tombstone
    assert not apply_entry(linker, LinkingEntry(journal_id="lj_x", chunk_id="c", journal=broken).to_bytes())
    assert index_state(linker) == before and "lj_x" not in linker.held


class LogStandIn:
    """The log's reader: what `catch_up` was called with, and whether a transaction was open then."""

    topic = "linking"

    def __init__(self) -> None:
        self.calls: list[bool] = []

    def catch_up(self, linker: Linker) -> int:
        self.calls.append(linker._saved is not None)
        return 0


class JournalGraph(Graph):
    """The stand-in graph, also answering the journal bodies the stage puts on the log again."""

    def read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        if query is journals.JOURNAL_BODIES:
            return [
                {"id": j.id, "chunk_id": j.chunk_id, "body": j.body} for j in self.journals if j.id in params["ids"]
            ]
        return super().read(query, params)


def log_stage(graph: Graph, log: LogStandIn) -> ExtractStage:
    extractor = ChunkExtractor(Linker(AliasIndex()))
    return ExtractStage(store=graph, extractor=extractor, options=ExtractOptions(), link_log=log)  # type: ignore[arg-type]  (the graph)


def logged(output) -> list[LinkingEntry]:
    return [m.record for m in output.messages if m.topic == "linking" and isinstance(m.record, LinkingEntry)]


def test_the_stage_logs_the_journals_of_the_chunks_it_wrote_and_reads_the_log_outside_its_transaction():
    chunks = linking_stream()
    graph, log = JournalGraph(), LogStandIn()
    graph.refuse = {chunks[1].id}  # refused by the graph: dead-lettered, so not on the log
    stage = log_stage(graph, log)
    output = stage.handle(records(chunks[:3]))
    assert log.calls == [False]
    assert [e.journal_id for e in logged(output)] == [journal_id(chunks[0]), journal_id(chunks[2])]
    assert stage.extractor.linker.held == {journal_id(chunks[0]), journal_id(chunks[2])}
    written = {j.id: journals.unpack(j.body) for j in graph.journals}
    assert all(e.journal.model_dump_json() == written[e.journal_id] for e in logged(output))

    # Redelivered after a SIGKILL that came before the entries were on the broker: written whole, logged again.
    again = log_stage(graph, LogStandIn()).handle(records(chunks[:1]))
    assert [e.journal_id for e in logged(again)] == [journal_id(chunks[0])]
    assert not again.dead


def test_a_replica_that_applies_another_s_entries_holds_what_that_replica_holds():
    """Replica A links and writes the first article's chunks; replica B applies A's entries from the log: B's index
    is A's (and A reading its own entries back changes nothing)."""
    chunks = [c for c in linking_stream() if c.article_id == "a1"]
    graph = JournalGraph()
    a = log_stage(graph, LogStandIn())
    entries = logged(a.handle(records(chunks)))
    b = Linker(AliasIndex())
    for item in entries:
        assert apply_entry(b, item.to_bytes())
        assert not apply_entry(a.extractor.linker, item.to_bytes())
    assert index_state(b) == index_state(a.extractor.linker)


def test_entry_keys_the_journal_of_the_chunk_record():
    chunk = linking_chunk("Doja Cat arrived.", 20230501, "a1", "c1", 5)
    journal = LinkJournal(article_id="a1", seen=(20230501, 5), context=[], ops=[], memory=ArticleMemory())
    key, item = entry(chunk, journal)
    assert key == item.journal_id == journal_id(chunk) and item.chunk_id == "c1"


def test_a_batch_is_linked_in_ingestion_order_whatever_order_its_partitions_delivered_it_in():
    """A chunk only learns from chunks ingested before it: a batch in which one partition's records came before
    another's (its fetch came back first) links as the stream in ingestion order does: the stage merges the batch's
    partitions by their records' ingestion order (ingest/kafka/ingestion_order.py `merged`)."""
    chunks = linking_stream()
    on = {c.id: n % 2 for n, c in enumerate(chunks)}  # two partitions, each in ingestion order
    by_partition = {p: [c for c in chunks if on[c.id] == p] for p in (1, 0)}
    stage = log_stage(JournalGraph(), LogStandIn())
    stage.handle([r for p, part in by_partition.items() for r in records(part, partition=p)])
    assert index_state(stage.extractor.linker) == index_state(undisturbed(chunks))


def test_a_partition_out_of_ingestion_order_is_linked_in_its_own_order_wherever_the_batches_end():
    """A partition whose records are not in ingestion order (a backfill's pages come after the live stream's
    later ones) is linked in offset order, in one batch or in two: where a fetch ends the batch no longer changes
    the links (a sort of each batch linked it in ingestion order within a batch only, so another batch boundary
    gave another index)."""
    chunks = list(reversed(linking_stream()))
    whole = log_stage(JournalGraph(), LogStandIn())
    whole.handle(records(chunks))
    split = log_stage(JournalGraph(), LogStandIn())
    split.handle(records(chunks[:2]))
    split.handle(records(chunks[2:], first=2))
    assert index_state(whole.extractor.linker) == index_state(split.extractor.linker)
    assert index_state(whole.extractor.linker) == index_state(undisturbed(chunks))


class JournalPages:
    """A graph connection holding journals, as reads.JOURNALS_PAGE pages them (in the order they were made)."""

    def __init__(self, items: list[tuple[str, LinkJournal]]):
        packed = [(k, journals.pack(j.model_dump_json())) for k, j in items]
        self.rows = [{"id": k, "order": n, "body": body} for n, (k, body) in enumerate(packed)]

    def read(self, query: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        assert query == reads.JOURNALS_PAGE
        return [r for r in self.rows if r["order"] > params["after"]][: params["limit"]]


def test_a_restart_holds_the_graph_s_journals_so_the_log_does_not_apply_them_again(story):
    """A replica starts from the graph's journals and then tails the log from the end it noted before: entries of
    journals the graph gave it (appended after that end) are not applied twice."""
    linker = Linker(AliasIndex())
    assert replay_all(linker, JournalPages(story[:5])) == 5  # type: ignore[arg-type]  (the connection)
    assert linker.held == {key for key, _ in story[:5]}
    before = index_state(linker)
    for key, journal in story[:5]:
        assert not apply_entry(linker, LinkingEntry(journal_id=key, chunk_id="c", journal=journal).to_bytes())
    assert index_state(linker) == before == index_state(applied(story[:5]))
