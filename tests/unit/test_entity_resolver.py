"""The QA resolver (qa/query.EntityResolver) on a constructed name index, no servers: a one- or two-letter name is
never a fuzzy match (nor a log link), and a maker-qualified name ("Google Stadia") yields to the entity its last
word(s) name when that one dominates the day."""

from __future__ import annotations

import random
import threading
import time

from rapidfuzz import utils

from newskg.core.timeaxes import end_of_day_ms
from newskg.evaluation.neon.linking import LinkedEntity, ResolverLinker
from newskg.graph.store.asof import AsOf
from newskg.graph.store.rows import EntityCounts, EntityName, EntityProfileRow
from newskg.qa.query import FUZZY_CUTOFF, EntityResolver, _FuzzyNames, _name_score

DAY = 20191119
Entity = tuple[str, str, str, int] | tuple[str, str, str, int, int]


class IndexStore:
    """What the resolver reads of the graph (names, per-entity profiles, the exact-name lookup), from a list of
    (id, name, type, chunks published and ingested the day before DAY, or on the day given)."""

    def __init__(self, entities: list[Entity]):
        self.entities = entities

    def entity_names(self, since_ms: int | None = None) -> list[EntityName]:
        return [EntityName(entity[0], entity[1], None) for entity in self.entities]  # a refresh: all, as changed

    def graph_clock_ms(self) -> int:
        return 0

    def entity_profiles(self, ids: list[str]) -> list[EntityProfileRow]:
        rows: list[EntityProfileRow] = []
        for id, name, type, chunks, *on in self.entities:
            day = on[0] if on else DAY - 1
            if id in ids:
                rows.append(EntityProfileRow(id, name, type, [(day, day, chunks)], []))  # ingested the day published
        return rows

    def find_entities(self, query: str, limit: int = 10, as_of: object = None) -> list[EntityCounts]:
        return []


def resolver(*entities: Entity) -> EntityResolver:
    return EntityResolver(IndexStore(list(entities)))  # pyright: ignore[reportArgumentType]  # the reads it uses


def found(index: EntityResolver, query: str) -> str | None:
    """The name of the entity `find` resolves the query to as of DAY."""
    best = index.find(query, AsOf(DAY))[2][0]
    return best.name if best else None


def test_a_one_or_two_letter_name_is_never_a_fuzzy_match():
    """h08: no TNG50 entity; the whole-query fallback found "e" inside "universe" (partial_ratio 100, scored 85)."""
    index = resolver(("e1", "E", "ORG", 3), ("e2", "AB", "ORG", 3), ("e3", "Doja Cat", "PERSON", 2))
    mention, topic, (best, close) = index.find("tng50 universe simulation", AsOf(DAY))
    assert (mention, topic, best, close) == ("tng50 universe simulation", "", None, [])
    assert index.resolve("abc", AsOf(DAY))[0] is None  # token_sort_ratio("ab", "abc") is 80: still no match
    assert found(index, "e") == "E"  # an exact name still resolves
    assert found(index, "doja") == "Doja Cat"  # a name's whole word still matches partially


def test_a_partial_match_must_agree_with_the_whole_words_it_falls_in():
    assert _name_score("tng50 universe simulation", "ers") < 75  # "ers" lies inside "universe", no whole word
    assert _name_score("doja", "doja cat") == 85.0
    assert _name_score("taylr swift tour", "taylor swift") >= 75  # a typo of whole words still matches
    assert _name_score("universal", "univ") < 75  # a word's first letters are not the word


def test_the_query_log_linker_does_not_count_a_query_for_a_one_letter_entity():
    linker = ResolverLinker(resolver(("e1", "E", "ORG", 3), ("e3", "Doja Cat", "PERSON", 2)))
    assert linker.link("tng50 universe simulation", DAY) is None
    assert linker.link("doja", DAY) == LinkedEntity("e3", "Doja Cat")


def test_a_maker_qualified_name_yields_to_the_dominant_entity_its_last_words_name():
    index = resolver(("g", "Google Stadia", "PRODUCT", 1), ("s", "Stadia", "PRODUCT", 15), ("o", "Google", "ORG", 40))
    mention, topic, (best, close) = index.find("google stadia launch", AsOf(DAY))
    assert (mention, topic) == ("google stadia", "launch")
    assert best is not None and best.name == "Stadia"
    assert [c.name for c in close] == ["Google Stadia"]  # reported, not dropped


def test_the_suffix_rule_needs_dominance_and_the_same_type():
    near = resolver(("g", "Google Stadia", "PRODUCT", 4), ("s", "Stadia", "PRODUCT", 15))
    assert found(near, "google stadia launch") == "Google Stadia"  # 15 < 5 x 4
    other_kind = resolver(("t", "Taylor Swift", "PERSON", 1), ("s", "Swift", "PRODUCT", 50))
    assert found(other_kind, "taylor swift tour") == "Taylor Swift"
    later = resolver(("g", "Google Stadia", "PRODUCT", 1), ("s", "Stadia", "PRODUCT", 15, DAY + 1))
    assert found(later, "google stadia launch") == "Google Stadia"  # Stadia's chunks: later


def test_the_leading_words_of_a_longer_name_stand_for_it():
    """h10 ("columbus police drug arrests"): "Columbus" was the leftmost name, though the query names the police."""
    index = resolver(("c", "Columbus", "PLACE", 30), ("p", "Columbus Police Department", "ORG", 2))
    mention, topic, (best, _close) = index.find("columbus police drug arrests", AsOf(DAY))
    assert (mention, topic) == ("columbus police", "drug arrests")
    assert best is not None and best.name == "Columbus Police Department"
    assert found(index, "columbus weather") == "Columbus"  # one leading word is no name of the longer one
    assert found(index, "columbus police department chief") == "Columbus Police Department"


def test_an_exact_name_wins_over_the_leading_words_of_a_longer_one():
    index = resolver(("t", "Taylor Swift", "PERSON", 5), ("e", "Taylor Swift Eras Tour", "EVENT", 9))
    assert found(index, "taylor swift lawsuit") == "Taylor Swift"
    later = resolver(("c", "Columbus", "PLACE", 3), ("p", "Columbus Police Department", "ORG", 2, DAY + 1))
    assert found(later, "columbus police drug arrests") == "Columbus"  # the department's chunks: later


def test_leading_words_stand_for_a_longer_name_only_when_they_leave_off_generic_words():
    """s01 ("samsung galaxy fold …"): "samsung galaxy" must not become "Samsung Galaxy Note"; "Note" tells it apart."""
    index = resolver(("s", "Samsung", "ORG", 20), ("n", "Samsung Galaxy Note", "PRODUCT", 2))
    assert found(index, "samsung galaxy fold year in gadgets") == "Samsung"
    index = resolver(("h", "Hang", "PERSON", 1), ("i", "Hang Seng Index", "ORG", 3))
    assert found(index, "hang seng us-china trade talks") == "Hang"


def test_leading_words_never_end_on_a_connector_nor_leave_off_a_place_or_a_title():
    """Review cases: the shorter name the user meant stays found."""
    index = resolver(("u", "United States", "PLACE", 50), ("d", "United States Department of State", "ORG", 2))
    assert found(index, "united states department of defense budget") == "United States"
    index = resolver(("w", "Washington", "PLACE", 80), ("u", "Washington State University", "ORG", 2))
    assert found(index, "washington state minimum wage") == "Washington"
    assert found(resolver(("t", "New York Times", "ORG", 9)), "new york rent prices") != "New York Times"


class AliasStore(IndexStore):
    """IndexStore whose entities carry aliases: (id, name, type, chunks, first day, aliases)."""

    def __init__(self, entities: list[tuple[str, str, str, int, int, list[str]]]):
        super().__init__([e[:5] for e in entities])  # pyright: ignore[reportArgumentType]
        self.aliases = {e[0]: e[5] for e in entities}

    def entity_names(self, since_ms: int | None = None) -> list[EntityName]:
        # each alias first seen with the entity (its first day): the name index dates aliases (issue #29)
        return [
            EntityName(e[0], e[1], [(a, e[4], end_of_day_ms(e[4])) for a in self.aliases[e[0]]]) for e in self.entities
        ]


def test_a_full_name_is_never_answered_with_someone_sharing_one_of_its_words():
    """ "taylor swift" asked the day before any page names her resolved to Nicole Taylor (her surname alias) and
    answered about a screenwriter; a full name nobody known carries is likewise nothing known yet."""
    nicole = ("p1", "Nicole Taylor", "PERSON", 3, DAY - 5, ["Taylor"])
    later = ("p2", "Taylor Swift", "PERSON", 9, DAY + 1, ["Swift"])
    index = EntityResolver(AliasStore([nicole, later]))  # pyright: ignore[reportArgumentType]
    mention, _, (best, close) = index.find("taylor swift", AsOf(DAY))
    assert (mention, best, close) == ("taylor swift", None, [])
    assert index.find("taylor swift", AsOf(DAY + 1))[2][0].name == "Taylor Swift"  # pyright: ignore[reportOptionalMemberAccess]
    assert index.find("Taylor Swift", AsOf(DAY))[2][0] is None  # as typed, capitals and all
    kelce = ("p3", "Travis Kelce", "PERSON", 2, DAY - 5, [])
    swift = EntityResolver(AliasStore([nicole, kelce]))  # pyright: ignore[reportArgumentType]
    assert swift.find("taylor kelce", AsOf(DAY))[2][0] is None  # "kelce" is a known surname: not Nicole Taylor
    assert found(swift, "taylor retirement") == "Nicole Taylor" and found(swift, "april taylor") == "Nicole Taylor"
    assert found(swift, "taylor") == "Nicole Taylor" and found(swift, "nicole taylor") == "Nicole Taylor"


class SlowNamesStore(IndexStore):
    """An IndexStore whose name read waits until the test lets it go (a large graph's reload in progress)."""

    def __init__(self, entities: list[Entity]):
        super().__init__(entities)
        self.slow, self.reading, self.finish = threading.Event(), threading.Event(), threading.Event()
        self.reads = 0

    def entity_names(self, since_ms: int | None = None) -> list[EntityName]:
        self.reads += 1
        if self.slow.is_set() and not self.finish.is_set():
            self.reading.set()
            assert self.finish.wait(10)
        return super().entity_names(since_ms)


def test_a_stale_name_index_is_rebuilt_by_one_reader_while_the_others_answer_from_the_old_copy():
    """Issue 30: the rebuild held the one lock every resolution takes, so readers queued behind a reload of every
    entity name (the half-load tail of temporal answers). Now one reader rebuilds and the others do not wait."""
    store = SlowNamesStore([("e1", "Doja Cat", "PERSON", 2)])
    index = EntityResolver(store, refresh_s=0.0)  # pyright: ignore[reportArgumentType]  # the reads it uses
    assert found(index, "doja cat") == "Doja Cat"  # the first load: every reader waits for it
    store.entities.append(("e2", "Jared Leto", "PERSON", 3))
    store.slow.set()
    refresher = threading.Thread(target=found, args=(index, "doja cat"))
    refresher.start()
    assert store.reading.wait(10)  # the refresh is reading the graph's names
    reads = store.reads
    started = time.monotonic()
    assert found(index, "doja cat") == "Doja Cat"  # answered from the old copy, without waiting
    assert found(index, "jared leto") is None  # not in the old copy (the graph's exact lookup finds none here)
    assert time.monotonic() - started < 1.0
    assert store.reads == reads  # one rebuild under way, none started by the readers that found the index stale
    store.finish.set()
    refresher.join(10)
    assert found(EntityResolver(IndexStore(store.entities)), "jared leto") == "Jared Leto"  # pyright: ignore[reportArgumentType]
    assert index._names_index is not None and "jared leto" in index._names_index.keys  # the new copy is in place


def reference_hits(mention: str, names: list[str]) -> dict[str, float]:
    """The fuzzy hits by their definition: every name whose _name_score reaches FUZZY_CUTOFF, each scored in Python."""
    query = utils.default_process(mention)
    scored = {name: _name_score(query, utils.default_process(name)) for name in names}
    return {name: score for name, score in scored.items() if score >= FUZZY_CUTOFF}


def test_fuzzy_hits_settled_by_the_compiled_passes_are_the_python_scores_exactly():
    """_FuzzyNames skips the Python score where rapidfuzz's passes settle it (issue 30: ~1,600 Python scores for a
    name among many alike): the hits and their scores must be those of scoring every name in Python."""
    rng = random.Random(3)
    words = ["doja", "cat", "taylor", "swift", "new", "york", "times", "ab", "e", "İstanbul", "o'neil", "jean-luc"]
    crowds = [
        [f"Entity {k}" for k in range(1500)],
        [
            " ".join(rng.choices([*words, "".join(rng.choices("abcxyz .-'", k=5))], k=rng.randint(1, 3)))
            for _ in range(800)
        ],
    ]
    for names in crowds:
        fuzzy = _FuzzyNames(names)
        for mention in [*rng.sample(names, 40), "Entity 12", "doja", "taylr swift", "ab", "e", "xyz", "Entity"]:
            assert fuzzy.hits(mention) == reference_hits(mention, names), mention


def test_a_name_known_only_later_among_many_alike_resolves_as_before():
    """The bench's case: 'Entity 123' not visible on the day, others alike are: the fuzzy path picks the best of
    the day as it always did."""
    index = resolver(*((f"e{k}", f"Entity {k}", "PERSON", 1, DAY + 1 if k == 123 else DAY - 1) for k in range(300)))
    best, _close = index.resolve("Entity 123", AsOf(DAY))
    assert best is not None and best.name == "Entity 12"  # alike and shorter: its token_sort_ratio is the highest
    assert best.score == _name_score("entity 123", "entity 12")
