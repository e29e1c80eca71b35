"""The chaos and outage tests kill and stop servers: they run on servers of their own (`newskg services up` in a
private data dir, started once for the folder), never on the session's shared `stack`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.cli import LocalStack


@pytest.fixture(scope="package")
def own_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalStack]:
    local = LocalStack(tmp_path_factory.mktemp("newskg-chaos-data"))
    local.up()
    try:
        yield local
    finally:
        local.down()
