"""The API against its own OpenAPI schema (schemathesis, in process over ASGI, on a real graph and mirror): every
check passes for every operation — no 5xx, every status and content type documented, every body the documented
shape (4xx: `ErrorBody`, the shape of core/errors.py), schema-valid parameters accepted and invalid ones refused.
Bounded and derandomised so the run is the same each time. Beside it, on the same graph, a deterministic sweep of
hostile values (control characters, days outside the served years) for every string and date parameter the
schema lists (tests/support/api_boundaries.py): random generation may miss one, the sweep cannot."""

from __future__ import annotations

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, assume, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation.modes import GenerationMode

from newskg.pipeline import qa_service
from newskg.qa.api import create_app
from newskg.wiring import Wiring
from tests.support.api_boundaries import cases
from tests.support.articles import STORIES, ingest_stories
from tests.support.cli import newskg_json
from tests.support.isolation import Isolation

pytestmark = pytest.mark.integration

REQUEST_TIMEOUT_S = 60  # an answer on a loaded 2-core machine; a slow answer is not a contract failure

EXAMPLES = 30  # per operation and mode: six operations, two modes, a few hundred requests in all


@pytest.fixture(scope="module")
def app(stack, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("contract")
    with Isolation(stack, tmp_path) as isolation:
        isolated = isolation.new()
        ingest_stories(isolated.env, tmp_path, STORIES)
        newskg_json("run", "all", "--until-idle", env=isolated.env)
        with Wiring(isolated.settings) as wiring:
            service = qa_service(wiring)
            service.ask("doja cat", "2023-05-02")  # loads the embedding model before the clock of any request runs
            yield create_app(service, {"graph": service.store.conn.ping}, api_keys=[])


def contract_failure(operation, mode: GenerationMode) -> str | None:
    """The first case of the operation that breaks a check, as schemathesis explains it; None if none does."""

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        deadline=None,
        database=None,
        phases=[Phase.explicit, Phase.generate],  # the first failing case as generated: shrinking costs minutes
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def keeps_its_contract(case) -> None:
        assume(mode is GenerationMode.NEGATIVE or not range_reversed(case))
        case.call_and_validate(timeout=REQUEST_TIMEOUT_S, excluded_checks=excluded_checks(operation))

    try:
        keeps_its_contract()
    except Unsatisfiable:
        if mode is GenerationMode.NEGATIVE and not operation.query and not operation.path_parameters:
            return None  # no parameter to get wrong
        raise
    except (Exception, BaseExceptionGroup) as exc:  # schemathesis's FailureGroup: all reported together below
        return f"{operation.method.upper()} {operation.path} ({mode}): {exc}"
    return None


def range_reversed(case) -> bool:
    """The one rule OpenAPI cannot state (it relates two parameters), said in the parameters' descriptions
    instead: `from` after `to`, or after the as-of day, is a 422. A valid-looking pair in that order is not a valid
    request."""
    query = case.query or {}
    first = query.get("from")
    later = [query.get("to"), query.get("as_of")]
    return isinstance(first, str) and any(isinstance(day, str) and first > day for day in later)


def excluded_checks(operation) -> list:
    """The Cypher console's body is a program: whether it is valid Cypher (else 400 `invalid_query`) is the
    server's to say, not the schema's, so a schema-valid statement may be refused; every other check holds."""
    if operation.path == "/v1/explore/cypher":
        return [schemathesis.checks.positive_data_acceptance]
    return []


@pytest.mark.timeout(900)
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_operation_keeps_its_contract(app, mode):
    schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    operations = [result.ok() for result in schema.get_all_operations()]  # pyright: ignore[reportAttributeAccessIssue] - Ok|Err union; an Err raises here, as it should
    assert {op.path for op in operations} >= {"/v1/ask", "/v1/entities", "/v1/entities/{entity_id}/timeline"}
    failures = [f for f in (contract_failure(op, mode) for op in operations) if f]
    assert not failures, "\n\n".join(failures)


def test_hostile_parameters_are_refused_before_the_real_graph(app):
    """review finding: q=%00, search=%00 and an entity id holding %00 reached FalkorDB (a NUL cuts the query
    text: 500); date=0001-01-03 and 9999-12-28 overflowed the ±7-day window shift (500). On the real graph: the
    review's requests, then every string and date parameter of every operation, each a 422 naming the parameter."""
    api = TestClient(app, raise_server_exceptions=False)
    review = [
        ("/v1/ask", {"q": "\x00", "date": "2023-05-02"}, "q"),
        ("/v1/ask", {"q": "doja cat", "date": "0001-01-03"}, "date"),
        ("/v1/ask", {"q": "doja cat", "date": "9999-12-28"}, "date"),
        ("/v1/entities", {"search": "\x00"}, "search"),
        ("/v1/entities/%00/timeline", {"from": "2023-05-01", "to": "2023-05-02"}, "entity_id"),
        ("/v1/explore/entities/e_%00/neighbourhood", {}, "entity_id"),
    ]
    for path, params, name in review:
        response = api.get(path, params=params)
        assert response.status_code == 422 and name in response.json()["detail"], (path, params, response.text)
    wrong = []
    for case in cases(app.openapi()):
        response = api.request(case.method, case.path, params=case.params, json=case.body)
        if response.status_code != 422 or case.parameter not in response.json().get("detail", ""):
            wrong.append(f"{case}: {response.status_code} {response.text[:200]}")
    assert not wrong, "\n".join(wrong)


def test_the_edges_of_the_served_years_answer(app):
    """The last served day shifted by the temporal rings, and a query whose text names a day before the served
    years (read as words, not as year 1): answers, not 500s."""
    api = TestClient(app, raise_server_exceptions=False)
    for date in ("1000-01-01", "8999-12-31"):
        response = api.get("/v1/ask", params={"q": "doja cat", "date": date, "strategy": "temporal", "k": 3})
        assert response.status_code == 200, (date, response.text)
    worded = api.get("/v1/ask", params={"q": "doja cat on Jan 3 0001", "date": "2023-05-02", "k": 3})
    assert worded.status_code == 200 and worded.json()["asked"] is None, worded.text
    latest = api.get("/v1/entities", params={"search": "doja cat", "as_of": "8999-12-31"})
    assert latest.status_code == 200 and latest.json()["entities"], latest.text
