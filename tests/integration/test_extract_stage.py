"""The extract stage end to end on the real broker and FalkorDB: articles → process → extract → graph;
idempotent re-writes, crash before commit, near-duplicates linked to every article, the LLM wire path."""

import pytest

from newskg.core.llm.cache import LLMCache
from newskg.graph.store.store import GraphStore
from newskg.ingest.kafka.reader import read_topic
from newskg.pipeline import build_runners, extract_stage
from newskg.wiring import Wiring, kafka_options, llm_base_url, open_graph
from tests.support.articles import STORY, write_jsonl
from tests.support.cli import newskg_json

pytestmark = pytest.mark.integration

PASSAGE = (
    "Doja Cat dressed as Choupette at the Met Gala in New York on Monday. The singer said Karl Lagerfeld's "
    "cat had inspired her look, and Jared Leto also arrived as Choupette. Leto posed with Anna Wintour "
    "before the dinner. Doja Cat thanked Karl's estate in a statement on May 3, 2023, and Wintour praised "
    "the theme."
)


def test_articles_flow_into_the_graph_and_rewrites_change_nothing(isolated, tmp_path):
    env, settings, names = isolated.env, isolated.settings, isolated.topics
    feed = write_jsonl(
        tmp_path / "a.jsonl",
        [
            {"url": "https://alpha.example/met", "text": PASSAGE, "published": "2023-05-05", "source": "alpha"},
            {"url": "https://alpha.example/paris", "text": STORY, "published": "2023-08-31", "source": "alpha"},
            {
                "url": "https://beta.example/paris",
                "text": STORY.replace("several friends", "a few friends"),
                "published": "2023-09-01",
                "source": "beta",
            },
        ],
    )
    newskg_json("ingest", "files", feed, env=env)
    stats = newskg_json("run", "all", "--until-idle", env=env)["stages"]
    assert stats["process"]["consumed"] == 3 and stats["extract"]["dead"] == 0
    counts = newskg_json("graph", "stats", env=env)
    mirror = counts.pop("mirror")
    assert counts["sources"] == 2 and counts["articles"] == 3 and counts["interactions"] >= 4
    assert mirror == {"interactions": counts["interactions"], "chunks": counts["chunks"]}  # written in the step
    with open_graph(settings) as conn:
        texts = {r["t"] for r in conn.read("MATCH (:Entity)-[:SUBJECT_OF]->(i:Interaction) RETURN i.text AS t")}
        assert "Doja Cat dressed as Choupette at the Met Gala in New York on Monday." in texts  # a whole sentence
        assert "Leto posed with Anna Wintour before the dinner." in texts  # filed under Jared Leto
        leto = conn.read("MATCH (:Entity {name: $n})-[:ALIAS]->(a:Alias) RETURN a.name AS a", {"n": "Jared Leto"})
        assert "Leto" in {r["a"] for r in leto}  # an alias is a dated (:Alias) node (#29)
        # The republished story: its chunks are linked to both articles, from two sources, on two days.
        shared = conn.read(
            "MATCH (c:Chunk)-[r:IN]->(a:Article)-[:FROM]->(s:Source) WITH c, "
            "collect(DISTINCT s.name) AS sources, collect(DISTINCT a.published_day) AS days "
            "WHERE size(sources) > 1 RETURN c.id AS id, sources, days"
        )
        assert shared and all(
            sorted(r["sources"]) == ["alpha", "beta"] and sorted(r["days"]) == [20230831, 20230901] for r in shared
        )
        evidence = conn.read("MATCH (i:Interaction)-[:EVIDENCE]->(c:Chunk) RETURN count(DISTINCT i) AS n")
        assert evidence[0]["n"] == counts["interactions"]

    # Every chunk message handled again by a fresh stage (a re-delivery of the whole topic): nothing changes.
    with Wiring(settings) as wiring:
        stage = extract_stage(wiring)
        stage.handle(read_topic(kafka_options(settings), names["chunks"]))
        assert GraphStore(open_graph(settings)).counts() == counts
        assert stage.mirror is not None and stage.mirror.count("interactions") == mirror["interactions"]


def test_crash_between_write_and_commit_yields_the_same_graph(isolated, tmp_path):
    env, settings = isolated.env, isolated.settings
    feed = write_jsonl(
        tmp_path / "b.jsonl",
        [{"url": "https://alpha.example/met", "text": PASSAGE, "published": "2023-05-05", "source": "alpha"}],
    )
    newskg_json("ingest", "files", feed, env=env)
    newskg_json("run", "process", "--until-idle", env=env)
    with Wiring(settings) as wiring:
        crashed = build_runners(wiring, ["extract"])[0]
        records = []
        while not records:
            records = crashed.consumer.poll(timeout_ms=1000)
        crashed.stage.handle(records)  # the graph write happened ...
    # ... and the process died before committing (closing its clients also frees the local Qdrant folder)
    before = GraphStore(open_graph(settings)).counts()
    again = newskg_json("run", "extract", "--until-idle", env=env)["stages"]["extract"]
    assert again["consumed"] == len(records)  # re-delivered
    assert GraphStore(open_graph(settings)).counts() == before


@pytest.mark.llm
def test_m1_over_the_real_llm_server_caches_and_survives_garbage(isolated, llm_stack, tmp_path):
    env, settings = isolated.env, isolated.settings
    assert llm_base_url(llm_stack.settings)
    feed = write_jsonl(
        tmp_path / "c.jsonl",
        [{"url": "https://alpha.example/met", "text": PASSAGE, "published": "2023-05-05", "source": "alpha"}],
    )
    newskg_json("ingest", "files", feed, env=env)
    newskg_json("run", "process", "--until-idle", env=env)
    run_env = {**env, "NEWSKG_EXTRACT_SUBJECTS": '["Doja Cat"]', "NEWSKG_LLM_MAX_TOKENS": "96"}
    first = newskg_json("run", "extract", "--variant", "m1", "--until-idle", env=run_env)["stages"]["extract"]
    assert first["consumed"] >= 1 and first["dead"] == 0  # whatever SmolLM2 said, the stage went on
    usage = LLMCache(settings.data_dir / "llm" / "cache.sqlite").usage()
    m1 = next(u for u in usage if u["prompt"] == "m1_subject")
    assert m1["calls"] >= 1 and m1["prompt_tokens"] > 0
    stats = newskg_json("extract", "stats", env=env)
    assert stats["totals"]["calls"] == sum(u["calls"] for u in usage)

    # The identical call again: served from the cache, no new call.
    text = newskg_json(
        "extract", "text", PASSAGE, "--date", "2023-05-05", "--variant", "m1", "--subject", "Doja Cat", env=run_env
    )
    assert text["marked_text"].startswith("<e>Doja Cat</e>")
    after = next(u for u in LLMCache(settings.data_dir / "llm" / "cache.sqlite").usage() if u["prompt"] == "m1_subject")
    assert after["cached"] >= 1 and after["calls"] == m1["calls"]


@pytest.mark.llm
def test_m2_pairs_batches_from_the_graph_over_the_real_llm_server(isolated, llm_stack, tmp_path):
    env, settings = isolated.env, isolated.settings
    rows = [
        {
            "url": f"https://alpha.example/met-{n}",
            "published": f"2023-05-0{n}",
            "source": "alpha",
            "text": f"Report {n}. " + PASSAGE,
        }
        for n in (2, 3)
    ]
    newskg_json("ingest", "files", write_jsonl(tmp_path / "d.jsonl", rows), env=env)
    newskg_json("run", "process", "--until-idle", env=env)
    run_env = {
        **env,
        "NEWSKG_EXTRACT_SUBJECTS": '["Doja Cat"]',
        "NEWSKG_EXTRACT_M2_BATCH": "2",
        "NEWSKG_EXTRACT_TOP_N": "1",
        "NEWSKG_LLM_MAX_TOKENS": "96",
    }
    newskg_json("run", "extract", "--variant", "m2", "--until-idle", env=run_env)
    with open_graph(settings) as conn:
        covered = conn.read(
            "MATCH (b:M2Batch)-[:COVERS]->(c:Chunk) RETURN b.pair AS pair, b.size AS size, count(c) AS chunks"
        )
        assert covered and all(r["pair"].startswith("e_") and r["size"] == r["chunks"] <= 2 for r in covered)
        # Every chunk that mentions both entities of a covered pair is in exactly one batch of that pair: covered
        # (the answer parsed) or given up on after its tries (dead-lettered, never counted as covered).
        for pair in {r["pair"] for r in covered}:
            s, o = pair.split("|")
            both = conn.read(
                "MATCH (:Entity {id: $s})<-[:MENTIONS]-(c:Chunk)-[:MENTIONS]->(:Entity {id: $o}) "
                "RETURN count(DISTINCT c) AS n",
                {"s": s, "o": o},
            )[0]["n"]
            in_batches = conn.read("MATCH (b:M2Batch {pair: $p})-[:COVERS]->(c) RETURN count(c) AS n", {"p": pair})[0][
                "n"
            ]
            given_up = conn.read("MATCH (b:M2Failed {pair: $p})-[:GAVE_UP]->(c) RETURN count(c) AS n", {"p": pair})[0][
                "n"
            ]
            assert in_batches + given_up == both
    calls = next(u for u in LLMCache(settings.data_dir / "llm" / "cache.sqlite").usage() if u["prompt"] == "m2_pair")
    assert calls["calls"] >= len({r["pair"] for r in covered})


def test_the_mirror_holds_the_models_vectors_when_remembered(isolated, tmp_path):
    """The stage embeds each distinct text once (graph/mirror/embed_cache.py): every point the mirror holds carries
    the vector the bare model gives for its text, and a re-delivered batch is re-mirrored without embedding anything
    again."""
    import numpy as np

    from newskg.graph.mirror.embed_cache import CachingEmbedder
    from newskg.graph.mirror.qdrant import CHUNKS, INTERACTIONS

    settings, names = isolated.settings, isolated.topics
    feed = write_jsonl(
        tmp_path / "c.jsonl",
        [
            {"url": "https://alpha.example/met", "text": PASSAGE, "published": "2023-05-05", "source": "alpha"},
            {"url": "https://alpha.example/paris", "text": STORY, "published": "2023-08-31", "source": "alpha"},
        ],
    )
    newskg_json("ingest", "files", feed, env=isolated.env)
    newskg_json("run", "process", "--until-idle", env=isolated.env)
    records = read_topic(kafka_options(settings), names["chunks"])
    with Wiring(settings) as wiring:
        stage = extract_stage(wiring)
        embedder, mirror = wiring.embedder(), stage.mirror
        assert isinstance(embedder, CachingEmbedder) and mirror is not None
        stage.handle(records)
        embedded = embedder.embedded
        stage.handle(records)  # re-delivered: written whole already, re-mirrored from what the process remembers
        assert embedder.embedded == embedded
        for collection in (INTERACTIONS, CHUNKS):
            ids = sorted(mirror.graph_ids(collection))
            assert ids
            texts = {str(p["graph_id"]): str(p["text"]) for p in mirror.payloads(collection, ids)}
            held = np.asarray([mirror.vectors(collection, ids)[i] for i in ids])
            model = np.asarray(embedder.inner.embed([texts[i] for i in ids]))
            assert np.abs(held - model).max() < 1e-5, collection
