"""The typed seam between the graph connections and the store's callers."""

import pytest
from pydantic import ValidationError

from newskg.graph.connection.base import DELETE_ALL, GraphConnection, Params, Row
from newskg.graph.store.rows import EntityProfileRow, LateCounts, TimelineRow, as_dict, row_of, rows_of


def test_rows_become_typed_rows_and_a_wrong_column_fails_at_the_seam():
    late = row_of(LateCounts, {"facts": 2, "chunks": 1, "first_ingested_ms": None})
    assert (late.facts, late.chunks, late.first_ingested_ms) == (2, 1, None)
    profile = rows_of(
        EntityProfileRow,
        [{"id": "e1", "name": "A", "type": "ORG", "chunk_cells": [[20230501, 20230501, 2]], "interaction_cells": []}],
    )[0]
    assert profile.chunk_cells == [(20230501, 20230501, 2)]
    with pytest.raises(ValidationError):
        row_of(LateCounts, {"facts": "many", "chunks": 1, "first_ingested_ms": None})
    with pytest.raises(ValidationError):
        row_of(TimelineRow, {"id": "x1"})  # a column the query did not return


def test_as_dict_keeps_the_column_names():
    assert as_dict(LateCounts(1, 2, None)) == {"facts": 1, "chunks": 2, "first_ingested_ms": None}


class _Recording(GraphConnection):
    dialect = "neo4j"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def run(self, query: str, params: Params | None = None) -> list[Row]:
        self.queries.append(query)
        return []

    def ping(self) -> bool:
        return True

    def close(self) -> None:
        pass


def test_drop_is_on_every_connection():
    conn = _Recording()
    conn.drop()
    assert conn.queries == [DELETE_ALL]
