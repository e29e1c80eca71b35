"""What each make target installs first (`make -n -B`: every step it would run from nothing, none run): the demo
gets the venv with the local servers and nothing of the test suite's (no llama.cpp build, no npm, no checkov, no
chromium); `make explore` adds the explorer's graph library alone (npm, dependencies only); `make test` gets all of
it, the llama.cpp server included; and no setup step turns pip's cache off, so the llama.cpp wheel built once is
reused by every later setup."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TEST_SUITE_ONLY = ["setup.sh full", "setup.sh llm", "setup_node.sh full", "setup_checkov.sh"]


def planned(target: str) -> str:
    """The commands `make TARGET` runs on a bare checkout, in order."""
    # Not the outer make's view: under `make test` the inherited MAKELEVEL/MAKEFLAGS add "Entering directory" lines.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES")}
    command = ["make", "--no-print-directory", "-n", "-B", target]
    return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("target", ["demo", "explore", "services", "bench"])
def test_the_demo_and_its_neighbours_install_only_the_demo_setup(target):
    plan = planned(target)
    assert "scripts/setup.sh demo" in plan
    assert not [step for step in TEST_SUITE_ONLY if step in plan], plan
    # the explorer's page needs cytoscape from npm; the demo only prints the explorer's URL (`make explore` serves it)
    assert ("setup_node.sh explore" in plan) == (target == "explore"), plan


def test_explore_installs_the_graph_library_before_it_serves():
    plan = planned("explore")
    assert plan.index("scripts/setup.sh demo") < plan.index("scripts/setup_node.sh explore")
    assert plan.index("scripts/setup_node.sh explore") < plan.index("scripts/explore.sh")


def test_the_demo_tells_where_the_explorer_and_its_install_are():
    demo = (REPO / "scripts" / "demo.sh").read_text()
    assert "make explore" in demo and "installs" in demo.split("make explore", 1)[1].splitlines()[0]


@pytest.mark.parametrize("target", ["test", "test-chaos", "setup"])
def test_the_test_suite_installs_everything_the_llm_server_included(target):
    plan = planned(target)
    order = [plan.index(f"scripts/{step}") for step in ["setup.sh demo", *TEST_SUITE_ONLY]]
    assert order == sorted(order), plan  # the llm step needs the venv the demo step makes
    if target != "setup":
        assert "-m pytest" in plan.rstrip().splitlines()[-1], plan  # the tests run after every setup step


def test_setup_llm_alone_builds_on_the_demo_setup():
    plan = planned("setup-llm")
    assert plan.index("scripts/setup.sh demo") < plan.index("scripts/setup.sh llm")
    assert "setup.sh full" not in plan


def test_no_setup_step_turns_the_pip_cache_off():
    scripts = sorted((REPO / "scripts").glob("setup*.sh"))
    assert scripts
    for script in scripts:
        assert not re.search(r"no-cache-dir|PIP_NO_CACHE_DIR", script.read_text()), script.name
