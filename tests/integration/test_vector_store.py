"""qdrant-client in local mode (the same API the production server is reached through)."""

import numpy as np
import pytest
from qdrant_client import models

from core.ids import point_uuid
from newskg.wiring import open_qdrant

pytestmark = pytest.mark.integration


def test_upsert_and_filtered_search_by_integer_day(isolated):
    settings = isolated.settings
    client = open_qdrant(settings)
    client.create_collection(
        "interactions", vectors_config=models.VectorParams(size=8, distance=models.Distance.COSINE)
    )
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(200, 8))
    points = [
        models.PointStruct(
            id=point_uuid(f"i{i}"),
            vector=vectors[i].tolist(),
            payload={"graph_id": f"i{i}", "event_day": 20230801 + i % 30},
        )
        for i in range(200)
    ]
    client.upsert("interactions", points)
    client.upsert("interactions", points)  # idempotent: same ids
    assert client.count("interactions").count == 200

    window = models.Filter(
        must=[models.FieldCondition(key="event_day", range=models.Range(gte=20230810, lte=20230812))]
    )
    hits = client.query_points("interactions", query=vectors[9].tolist(), query_filter=window, limit=50).points
    assert len(hits) == 3 * 200 // 30 + 1 - 1 or hits  # non-empty and all inside the window
    assert all(20230810 <= h.payload["event_day"] <= 20230812 for h in hits)
    assert hits[0].payload["graph_id"] == "i9"  # its own vector is the best match and day 20230810 is inside
    expected = sum(1 for i in range(200) if 20230810 <= 20230801 + i % 30 <= 20230812)
    assert len(hits) == expected
    client.close()
