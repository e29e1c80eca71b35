"""FalkorDB stopped and started again on the same data dir, as `make explore` after `make demo` and every
production restart do: each start comes up with the data, and its AOF replays no schema and no failing command."""

from pathlib import Path

import pytest

from newskg.graph.store.store import GraphStore
from newskg.services.manager import ServiceManager
from newskg.wiring import open_graph
from tests.support.cli import LocalStack

pytestmark = pytest.mark.integration

ARTICLES_PER_CYCLE = 500
WRITE = "UNWIND range($first, $last) AS i MERGE (a:Article {id: 'a' + toString(i)}) ON CREATE SET a.n = i"


def _incremental_aof(data_dir: Path) -> bytes:
    folder = data_dir / "services" / "graph" / "falkordb" / "appendonlydir"
    return b"".join(path.read_bytes() for path in sorted(folder.glob("*.incr.aof")))


def test_restarts_on_one_data_dir_after_stops_and_kills(tmp_path: Path):
    """Four starts on one data dir, each after a kill -9 or a `services down`. A kill leaves an AOF to replay: it
    holds the writes but no schema (FalkorDB cannot use an index its replay creates, which made replays quadratic)
    and no refused GRAPH.CONSTRAINT (init used to ask again at every start). A stop leaves the graph in the AOF's
    RDB base, nothing to replay."""
    local = LocalStack(tmp_path)
    try:
        for cycle in range(4):
            local.up("--only", "graph")  # raises unless healthy
            with open_graph(local.settings) as conn:
                GraphStore(conn).init()  # every stage and command does this on start
                assert conn.read("MATCH (a:Article) RETURN count(a) AS c") == [{"c": cycle * ARTICLES_PER_CYCLE}]
                first = cycle * ARTICLES_PER_CYCLE
                conn.run(WRITE, {"first": first, "last": first + ARTICLES_PER_CYCLE - 1})
            if cycle % 2 == 0:
                ServiceManager(local.settings).kill("graph")
                replayed = _incremental_aof(tmp_path).upper()
                assert b"MERGE (A:ARTICLE" in replayed  # nothing acknowledged is lost
                assert b"CREATE INDEX" not in replayed
                assert b"GRAPH.CONSTRAINT" not in replayed
            else:
                local.down()
                assert b"GRAPH.QUERY" not in _incremental_aof(tmp_path).upper()
    finally:
        local.down()
    log = (tmp_path / "services" / "graph" / "falkordb" / "server.log").read_text(errors="replace")
    assert "Constraint already exists" not in log
    assert log.count("Ready to accept connections") == 4
