"""Every string and date parameter of every API operation is refused with a 422 `ErrorBody` before anything reaches
a store or date arithmetic (the cases come from the app's own OpenAPI schema: tests/support/api_boundaries.py);
the served years leave room for every shift the read paths make; a date written in a query outside them stays
words; API keys that a request without a key would match are refused when settings load and when the app is
built. The same sweep on a real graph: tests/integration/test_api_contract.py."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError

from newskg.core.settings import Settings
from newskg.qa.api import create_app
from newskg.qa.contract import DATE_PATTERN, PROGRAM_PATTERN, TEXT_PATTERN
from newskg.qa.dates import FIRST_YEAR, LAST_YEAR, find_date
from tests.support.api_boundaries import Case, cases

EXPLORER_TIMELINE_MAX_DAYS = 730  # qa/explore.py: the timeline's `days` parameter, le=730


class Tripwire:
    """A service and store that fail the request (a 500) if a route ever reaches them."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"a refused request reached the service ({name})")


def guarded_client() -> TestClient:
    service = Tripwire()
    return TestClient(create_app(service, {}, api_keys=[]), raise_server_exceptions=False)  # pyright: ignore[reportArgumentType]


def send(api: TestClient, case: Case) -> Any:
    if case.body is not None:
        return api.request(case.method, case.path, json=case.body)
    return api.request(case.method, case.path, params=case.params)


def test_every_string_and_date_parameter_is_refused_before_the_store():
    """review finding: q=%00, search=%00 or an entity id holding %00 reached FalkorDB (a NUL cuts the query text:
    500); date=0001-01-03 or 9999-12-28 overflowed the ±7-day window shift (500). Now every string parameter of
    every operation refuses C0 controls and DEL, every date parameter the days outside the served years: a 422
    naming the parameter, and the service is never called."""
    api = guarded_client()
    swept = cases(api.get("/openapi.json").json())
    assert {c.parameter for c in swept} >= {"q", "search", "entity_id", "interaction_id", "date", "as_of", "from"}
    wrong = []
    for case in swept:
        response = send(api, case)
        body = response.json()
        if response.status_code != 422 or set(body) != {"reason", "detail"} or case.parameter not in body["detail"]:
            wrong.append(f"{case}: {response.status_code} {response.text[:200]}")
    assert not wrong, "\n".join(wrong)


def test_the_422_says_what_the_parameter_must_be_not_the_regex():
    api = guarded_client()
    text = api.get("/v1/ask", params={"q": "doja\x00cat", "date": "2023-05-02"}).json()["detail"]
    day = api.get("/v1/ask", params={"q": "doja cat", "date": "0001-01-03"}).json()["detail"]
    assert text == "query.q: must be text without control characters (U+0000-U+001F, U+007F)"
    assert day == "query.date: must be a date YYYY-MM-DD from 1000-01-01 to 8999-12-31"


def test_the_patterns_accept_exactly_the_served_text_and_years():
    """The schema's patterns are the rule: a year just inside passes, one just outside does not; printable text of
    any script passes, every C0 control and DEL does not (tab and line breaks only in the console's program)."""
    assert re.match(DATE_PATTERN, f"{FIRST_YEAR}-01-01") and re.match(DATE_PATTERN, f"{LAST_YEAR}-12-31")
    assert not re.match(DATE_PATTERN, f"{FIRST_YEAR - 1:04d}-12-31")
    assert not re.match(DATE_PATTERN, f"{LAST_YEAR + 1}-01-01")
    assert re.match(TEXT_PATTERN, "Doja Cat — Москва 東京 \u0085 ok")
    controls = [chr(c) for c in [*range(0x20), 0x7F]]
    assert not [c for c in controls if re.match(TEXT_PATTERN, f"a{c}b")]
    assert [c for c in controls if re.match(PROGRAM_PATTERN, f"a{c}b")] == ["\t", "\n", "\r"]


def test_the_served_years_leave_room_for_every_shift_the_read_paths_make():
    """The longest shifts: retrieval's ±qa_backoff_days rings (at most the setting's bound) and the explorer's
    timeline, which reaches `days` back from the as-of day."""
    backoff = Settings.model_fields["qa_backoff_days"].metadata
    longest = max([EXPLORER_TIMELINE_MAX_DAYS, *(getattr(m, "le", 0) for m in backoff)])
    first, last = dt.date(FIRST_YEAR, 1, 1), dt.date(LAST_YEAR, 12, 31)
    assert first - dt.timedelta(days=longest) > dt.date.min and last + dt.timedelta(days=longest) < dt.date.max


def test_a_date_written_in_a_query_outside_the_served_years_stays_words():
    """review finding (the same overflow by another door): "on Jan 3 0001" in q set the query day to year 1."""
    asked = dt.date(2023, 5, 2)
    assert find_date("doja cat on Jan 3 0001", asked) is None
    assert find_date("doja cat 0001-01-03", asked) is None
    assert find_date("doja cat on 9999-12-28", asked) is None
    found = find_date("doja cat on Jan 3 1000", asked)
    assert found is not None and found.day == dt.date(1000, 1, 3)


@pytest.mark.parametrize("keys", ['[""]', '["a","","b"]', '[" "]', '["\\t"]', '["key "]'])
def test_an_api_key_a_keyless_request_would_match_is_refused_when_settings_load(monkeypatch, keys):
    """review finding: an empty string in NEWSKG_API_KEYS matched a request with no key (the gate reads a missing
    header as ""). The error names the setting and never prints the keys."""
    monkeypatch.setenv("NEWSKG_API_KEYS", keys.replace('"a"', '"secret-a"'))
    with pytest.raises(ValidationError) as refused:
        Settings(_env_file=None)
    assert "NEWSKG_API_KEYS" in str(refused.value) and "secret-a" not in str(refused.value)


@pytest.mark.parametrize("keys", ["", "a,,b"])
def test_an_api_key_list_that_is_not_json_is_refused_when_settings_load(monkeypatch, keys):
    monkeypatch.setenv("NEWSKG_API_KEYS", keys)
    with pytest.raises(ValueError, match="api_keys"):  # pydantic-settings' SettingsError: the list is JSON
        Settings(_env_file=None)


def test_an_empty_api_key_is_refused_when_the_app_is_built():
    """The same rule for an app built without settings (tests, benches, embedding code)."""
    with pytest.raises(ValueError, match="match a request without a key"):
        create_app(None, {}, api_keys=["k1", ""])  # pyright: ignore[reportArgumentType]
    no_key = TestClient(create_app(None, {}, api_keys=["k1"])).get("/v1/entities", params={"search": "x"})  # pyright: ignore[reportArgumentType]
    assert no_key.status_code == 401


@pytest.mark.parametrize("date", ["0001-01-03", "9999-12-28"])
def test_the_cli_refuses_a_date_outside_the_years_qa_serves_before_any_server(tmp_path, date):
    """Review finding (#28): `newskg ask --date 0001-01-03` overflowed the ±7-day window shift, as the API did; the
    CLI now refuses it with the API's bound, exit 2, before it opens a graph."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEWSKG_")} | {"NEWSKG_DATA_DIR": str(tmp_path)}
    proc = subprocess.run(
        [sys.executable, "-m", "newskg", "ask", "doja cat", "--date", date], env=env, capture_output=True, text=True
    )
    assert proc.returncode == 2 and "outside the years QA serves" in proc.stderr
