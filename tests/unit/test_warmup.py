"""The warm-up state machine (qa/warmup.py) and what /readyz says in each state (qa/api.py): pending → warming →
ready; a failing step → failed (reason warmup_failed) → retried → ready."""

import ast
import gc
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

from fastapi.testclient import TestClient

from newskg.qa.api import create_app
from newskg.qa.warmup import Warmup, service_steps

REPO = Path(__file__).resolve().parents[2]


class Gate:
    """A step that blocks until the test opens it, and says when it is running."""

    def __init__(self) -> None:
        self.entered, self.opened = threading.Event(), threading.Event()

    def __call__(self) -> None:
        self.entered.set()
        assert self.opened.wait(10)


def test_steps_run_in_order_and_ready_comes_last():
    order: list[str] = []
    gate = Gate()
    warmup = Warmup({"embedder": lambda: (order.append("embedder"), gate())[1], "graph": lambda: order.append("graph")})
    assert warmup.state == "pending" and not warmup.ready
    warmup.start()
    assert gate.entered.wait(10)
    assert warmup.state == "warming" and not warmup.ready and "embedder" in warmup.describe()
    gate.opened.set()
    assert warmup.wait(10)
    assert warmup.state == "ready" and order == ["embedder", "graph"]
    assert set(warmup.timings_ms) == {"embedder", "graph"}
    warmup.start()  # idempotent: nothing runs twice
    assert order == ["embedder", "graph"]


def test_a_failed_step_is_reported_then_retried_until_it_succeeds():
    attempts: list[int] = []
    release = threading.Event()

    def flaky() -> None:
        attempts.append(1)
        if not release.is_set():
            raise ConnectionError("graph still starting")

    warmup = Warmup({"graph": flaky}, retry_s=0.01)
    warmup.start()
    while not attempts:
        threading.Event().wait(0.01)
    assert not warmup.ready
    release.set()
    assert warmup.wait(10)
    assert len(attempts) >= 2 and warmup.state == "ready" and "graph" in warmup.timings_ms


def test_stop_ends_the_retries():
    warmup = Warmup({"graph": lambda: 1 / 0}, retry_s=0.01)
    warmup.start()
    warmup.stop()
    assert not warmup.wait(0.2) and warmup.state == "failed"
    assert "ZeroDivisionError" in warmup.describe()


class NoService:
    """create_app needs a service only for its routes; /readyz never touches it."""


def test_readyz_is_503_warming_until_the_warm_up_ends_then_200():
    gate = Gate()
    warmup = Warmup({"embedder": gate})
    app = create_app(NoService(), {"graph": lambda: True}, [], warmup=warmup)  # pyright: ignore[reportArgumentType]
    with TestClient(app) as client:  # the lifespan starts the warm-up
        assert gate.entered.wait(10)
        warming = client.get("/readyz")
        assert warming.status_code == 503
        body = warming.json()
        assert body["reason"] == "warming" and "embedder" in body["detail"]
        assert body["checks"] == {"graph": True, "warm": False}
        gate.opened.set()
        assert warmup.wait(10)
        ready = client.get("/readyz")
        assert ready.status_code == 200 and ready.json()["checks"] == {"graph": True, "warm": True}
        assert "embedder" in ready.json()["warmup_ms"]
        assert 'newskg_warmup_seconds{step="embedder"}' in client.get("/metrics").text


def test_readyz_says_which_warm_up_step_fails():
    warmup = Warmup({"mirror": lambda: 1 / 0}, retry_s=0.01)
    app = create_app(NoService(), {}, [], warmup=warmup)  # pyright: ignore[reportArgumentType]
    with TestClient(app) as client:
        while warmup.state != "failed":
            threading.Event().wait(0.01)
        body = client.get("/readyz").json()
        assert body["reason"] == "warmup_failed" and "mirror" in body["detail"]


def test_readyz_names_the_failed_dependency_once_warm():
    app = create_app(NoService(), {"graph": lambda: False}, [])  # pyright: ignore[reportArgumentType]
    with TestClient(app) as client:
        answer = client.get("/readyz")
        assert answer.status_code == 503
        assert answer.json()["reason"] == "not_ready" and answer.json()["detail"] == "not ready: graph"


def loaded_by_the_api(modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` importing what `serve` and `ask` use loads, in a fresh interpreter."""
    code = (
        "import sys, newskg.cli.app, newskg.cli.qa, newskg.qa.api, newskg.qa.warmup, newskg.qa.answer\n"
        "from newskg.pipeline import qa_checks, qa_service\n"
        f"print(sorted(m for m in {modules!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    return ast.literal_eval(out.stdout.strip())


def test_the_api_and_ask_import_no_parser_and_no_torch():
    """The QA side never parses text: importing what `serve` and `ask` use loads neither spaCy nor (through thinc)
    torch, which took ~265 MB of the API's memory before any model (issue 20). Torch comes only with a torch
    embedding backend, when the model loads."""
    assert loaded_by_the_api(("spacy", "thinc", "torch", "trafilatura")) == []


def test_an_extractive_api_imports_no_llm_sdk():
    """The openai SDK (~38 MB of RSS, imported by the LLM client's module) loads only where an LLM client is made:
    the QA API without one (the extractive answerer) never imports it, for its 512 MB budget at 20k interactions
    (issue 30). qa/answer.llm_failures imports it when an LLM answer fails."""
    assert loaded_by_the_api(("openai",)) == []


def test_the_last_step_freezes_what_the_warm_up_left_alive():
    """Issue 30: full collections walked every startup object, a 100-300 ms stall under load; after the warm-up
    they are frozen out of the collector's reach (and the step's time is exported like the others')."""
    steps = service_steps(SimpleNamespace(mirror=None))  # pyright: ignore[reportArgumentType]  # only names are read
    assert list(steps)[-1] == "gc_freeze"
    before = gc.get_freeze_count()
    try:
        steps["gc_freeze"]()
        assert gc.get_freeze_count() > before + 10_000  # this process's modules and objects, at the least
    finally:
        gc.unfreeze()
