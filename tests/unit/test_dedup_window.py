"""The dedup index's publication window and its memory of emitted sightings (pure logic, no broker)."""

import itertools

from newskg.ingest.process.dedup import DedupIndex

TEXT = (
    "Doja Cat arrived at the Paris show on Thursday night wearing a striking red outfit. The singer then posed "
    "for photographers outside the venue with her manager and several friends."
)
OTHER = "The central bank raised interest rates by a quarter point, citing persistent inflation pressures today."
THIRD = "Engineers closed the old stone bridge over the river after inspectors found deep cracks in its arches."


def test_a_sighting_already_emitted_is_decided_again_not_duplicate():
    index = DedupIndex(0.7, 128, window_days=30)
    index.add("kept", "article-a", index.signer.sign(TEXT), 20230831)
    edited = TEXT.replace("several", "a few")
    first = index.decide("own", "article-b", index.signer.sign(edited))
    assert (first.kind, first.chunk_id) == ("duplicate", "kept")
    assert index.add_sighting("article-b", "own", "kept", 20230901)
    again = index.decide("own", "article-b", index.signer.sign(edited))
    assert again.kind == "again"
    # an exact copy (own chunk id == kept id) in article b: once emitted, it too is "again"
    assert index.decide("kept", "article-b", index.signer.sign(TEXT)).kind == "duplicate"
    index.add_sighting("article-b", "kept", "kept", 20230901)
    assert index.decide("kept", "article-b", index.signer.sign(TEXT)).kind == "again"
    # another article still sights it
    assert index.decide("own", "article-c", index.signer.sign(edited)).kind == "duplicate"


def test_window_evicts_by_publication_day_relative_to_the_newest_seen():
    index = DedupIndex(0.7, 128, window_days=30)
    mh = index.signer.sign(TEXT)
    assert index.add("old", "a1", mh, 20230101)
    index.add_sighting("a9", "s-old", "old", 20230101)
    assert index.decide("x", "a2", mh).kind == "duplicate"
    # 29 days later: still inside the 30-day window
    assert index.add("other", "a3", index.signer.sign(OTHER), 20230130)
    assert "old" in index and index.decide("x", "a2", mh).kind == "duplicate"
    # day 30 after: "old" falls out of the LSH, the owner map and the sighting memory
    assert index.add("third", "a4", index.signer.sign(THIRD), 20230131)
    assert "old" not in index and len(index) == 2 and index.evicted == 1 and index.sightings == 0
    assert index.decide("x", "a2", mh).kind == "new"
    # an entry older than the window is not held at all
    assert not index.add("late", "a5", mh, 20221225)
    assert not index.add_sighting("a6", "s-late", "other", 20221225)
    assert "late" not in index and index.sightings == 0


def test_window_state_does_not_depend_on_replay_order():
    entries = [
        (f"c{i}", f"a{i}", day) for i, day in enumerate([20230101, 20230115, 20230204, 20230210, 20230305, 20230203])
    ]
    texts = [TEXT, OTHER, THIRD, TEXT + " Later.", OTHER + " Again.", THIRD + " Still."]
    held = set()
    for order in itertools.permutations(range(len(entries))):
        index = DedupIndex(0.7, 64, window_days=30)
        for i in order:
            cid, aid, day = entries[i]
            index.add(cid, aid, index.signer.sign(texts[i]), day)
        held.add(frozenset(cid for cid, _, _ in entries if cid in index))
    assert held == {frozenset({"c2", "c3", "c4"})}  # newest 2023-03-05: 30 days held, 02-04 in, 02-03 out


def test_band_table_proposes_the_same_candidates_as_datasketch():
    """The flat-array LSH is datasketch's MinHashLSH rule (same b, r; candidates share a whole band), loaded
    online, in bulk from the log, or both."""
    import random

    from datasketch import MinHashLSH

    rng = random.Random(3)
    words = [f"w{i}" for i in range(400)]
    base = [" ".join(rng.choice(words) for _ in range(60)) for _ in range(60)]
    texts = base + [
        " ".join(w if rng.random() > rate else "x" for w in t.split()) for t in base[:40] for rate in (0.05, 0.2, 0.4)
    ]
    index = DedupIndex(0.7, 128)
    reference = MinHashLSH(threshold=0.6, num_perm=128, weights=(0.2, 0.8))
    signatures = [index.signer.sign(t) for t in texts]
    for i, mh in enumerate(signatures[:100]):
        if i % 2:
            index.add(f"k{i}", "a", mh)
        else:
            index.load(f"k{i}", "a", mh.hashvalues.astype("uint32"))
        reference.insert(f"k{i}", mh)
    index.settle()
    for mh in signatures:
        ours = {
            index._ids[s]
            for s in index._bands.candidates(index._bands.keys_of(mh.hashvalues.astype("uint32")[None, :])[0])
        }
        assert ours == set(reference.query(mh))


def test_eviction_compacts_and_decisions_survive():
    index = DedupIndex(0.7, 64, window_days=2)
    texts = [f"story {i} " + " ".join(f"word{i}x{j}" for j in range(30)) for i in range(6000)]
    for i, text in enumerate(texts):  # 1,000 a day over 6 days: compactions happen on the way
        index.load(f"c{i}", f"a{i}", index.signer.sign(text).hashvalues.astype("uint32"), 20240101 + i // 1000)
    assert len(index) == 2000 and index.evicted == 4000
    assert index.decide("q", "other", index.signer.sign(texts[5999])).chunk_id == "c5999"
    assert index.decide("q", "other", index.signer.sign(texts[10])).kind == "new"  # evicted


def test_entries_without_a_day_are_held_and_no_window_keeps_everything():
    index = DedupIndex(0.7, 64, window_days=1)
    index.add("undated", "a0", index.signer.sign(TEXT))
    index.add("new", "a1", index.signer.sign(OTHER), 20250101)
    assert "undated" in index
    unbounded = DedupIndex(0.7, 64)
    unbounded.add("a", "a0", unbounded.signer.sign(TEXT), 19990101)
    unbounded.add("b", "a1", unbounded.signer.sign(OTHER), 20250101)
    assert "a" in unbounded and "b" in unbounded


def test_producer_ordering_options_from_the_brokers_api_versions():
    from kafka import KafkaProducer

    from newskg.ingest.kafka.producer import ordering_options, supports_idempotence

    assert supports_idempotence({0: (0, 9), 22: (0, 4)})
    assert not supports_idempotence({0: (0, 9)})  # no InitProducerId: no producer ids
    assert not supports_idempotence({0: (0, 2), 22: (0, 1)})  # Produce < v3: no sequenced record batches
    assert ordering_options(False) == {
        "enable_idempotence": False,
        "max_in_flight_requests_per_connection": 1,
        "retries": 5,
    }
    # The idempotent options satisfy kafka-python's requirements (acks=all, retries > 0, <= 5 in flight):
    # set explicitly, a conflict would raise KafkaConfigurationError instead of silently dropping idempotence.
    options = ordering_options(True)
    assert options["enable_idempotence"] is True and options["max_in_flight_requests_per_connection"] <= 5
    assert "retries" not in options and KafkaProducer.DEFAULT_CONFIG["retries"] > 0
