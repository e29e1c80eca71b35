"""Consumer batches that reach every branch of GraphStore.write_batch: sightings, aliases and a description, M2
batches and journals (FullBatch); one chunk text carried by two articles in one batch and re-dated by an earlier
backfill in a later one; an interaction with no object; duplicate mentions; the bench's provenanced rows (three
time axes, backfills); and a batch delivered twice. The graph they leave is what the store's write path means: a
faster write path must leave the same one (tests/integration/test_graph_store_batches.py)."""

from __future__ import annotations

import random
from typing import Any

from bench.graph import provenance_batch, synthetic
from tests.support.full_batch import FullBatch
from tests.support.records import ENTITIES, dated_chunk, doja_and_choupette

SHARED_TEXT = "Doja Cat walked Choupette through the Louvre."


def scenario_batches() -> list[dict[str, Any]]:
    """The write_batch keyword arguments of each batch, in delivery order."""
    live = dated_chunk(SHARED_TEXT, 20230510, "alpha", 20230510, article="a_alpha_live")
    repeat = dated_chunk(SHARED_TEXT, 20230511, "beta", 20230511, article="a_beta_repeat")
    backfill = dated_chunk(SHARED_TEXT, 20230509, "gamma", 20230515, article="a_gamma_backfill")
    lone = doja_and_choupette(live, "Doja Cat toured the Louvre", 20230510).model_copy(
        update={"object_id": None, "object_name": None}
    )
    shared = [live, repeat]
    two_articles: dict[str, Any] = {
        "chunks": shared,
        "entities": ENTITIES,
        "mentions": [(c.id, e.id) for c in shared for e in ENTITIES] * 2,
        "interactions": [doja_and_choupette(c, "Doja Cat walked Choupette", 20230510) for c in shared] + [lone],
    }
    redated: dict[str, Any] = {
        "chunks": [backfill],
        "entities": ENTITIES,
        "mentions": [(backfill.id, e.id) for e in ENTITIES],
        "interactions": [doja_and_choupette(backfill, "Doja Cat walked Choupette", 20230510)],
    }
    rows = synthetic(120, random.Random(7), prefix="s")
    full = FullBatch().write_kwargs()
    return [
        full,
        two_articles,
        *(provenance_batch(rows[i : i + 40]) for i in range(0, len(rows), 40)),
        redated,
        full,
    ]
