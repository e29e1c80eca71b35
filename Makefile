# newskg: `make demo` and `make test` work on a bare machine (they run `make setup` first); `make test-unit` and
# `make lint` need only the light `make setup-dev` (no servers, no llama.cpp build). `make setup` also installs
# Neo4j's Cypher front-end from npm (package-lock.json, `npm ci`), which the Neo4j dialect tests run under Node,
# and checkov in .venv-checkov for the Kubernetes policy test.
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-done
# npm ci writes it: node_modules is in step with package-lock.json
NODE_STAMP := node_modules/.package-lock.json
# checkov lives in its own venv (its pins clash with the project's)
CHECKOV_STAMP := .venv-checkov/.setup-done
DEV_STAMP := $(VENV)/.setup-dev-done

.PHONY: setup setup-dev services demo explore test test-unit test-chaos bench soak lint down clean

setup-dev: $(DEV_STAMP)

$(DEV_STAMP): pyproject.toml constraints.txt scripts/setup.sh
	bash scripts/setup.sh dev
	touch $(DEV_STAMP)

setup: $(STAMP) $(NODE_STAMP) $(CHECKOV_STAMP)

$(CHECKOV_STAMP): tools/checkov-constraints.txt scripts/setup_checkov.sh
	bash scripts/setup_checkov.sh
	touch $(CHECKOV_STAMP)

$(NODE_STAMP): package.json package-lock.json scripts/setup_node.sh
	bash scripts/setup_node.sh

$(STAMP): $(DEV_STAMP) pyproject.toml constraints.txt scripts/setup.sh
	bash scripts/setup.sh full
	touch $(STAMP)

services: setup
	$(BIN)/newskg services up
	$(BIN)/newskg services status

demo: setup
	bash scripts/demo.sh

# The explorer on the demo's graph: prints its URL (the most connected entity, as of the last day), then serves.
explore: setup
	bash scripts/explore.sh

# Everything under tests/ (pyproject's testpaths): unit, integration and tests/chaos.
test: setup
	$(BIN)/python -m pytest

# Crash/restart chaos and server outages alone: tests/chaos (servers of its own, which it kills and stops) and the
# stage SIGKILL tests of tests/integration, all marked `chaos`, on the issue's ≥ 300-article stream (`make test`
# runs them on 56 articles). NEWSKG_CHAOS_SEED replays a printed seed.
test-chaos: setup
	NEWSKG_CHAOS_EVENTS=$${NEWSKG_CHAOS_EVENTS:-25} $(BIN)/python -m pytest -m chaos tests/chaos tests/integration

# No servers, no LLM: tests/conftest.py refuses a unit test that carries integration, llm or chaos.
test-unit: setup-dev
	$(BIN)/python -m pytest -n 2 tests/unit  # pure CPU: one worker per core of this 2-core machine

# Every bench script with --json at modest sizes (a loaded 2-core machine: about half an hour), then bench/RESULTS.md
# from their figures. `make bench BENCH_FLAGS=--full` runs the full-size flags; BENCH_FLAGS="--only graph qa" a few.
BENCH_FLAGS ?=
bench: setup
	PYTHONPATH=$(CURDIR) $(BIN)/python -m bench.results $(BENCH_FLAGS)

# The API under steady load while the pipeline ingests (bench/soak.py); exits 1 if a bound is broken.
SOAK_MINUTES ?= 10
soak: setup
	mkdir -p .newskg
	PYTHONPATH=$(CURDIR) $(BIN)/python -m bench.soak --minutes $(SOAK_MINUTES) --out .newskg/soak.json

lint: setup-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/pyright

down:
	$(BIN)/newskg services down

clean: down
	rm -rf .newskg
