# newskg: `make demo` and `make test` work on a bare machine (they run `make setup` first).
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.setup-done

.PHONY: setup services demo test test-unit bench lint down clean

setup: $(STAMP)

$(STAMP): pyproject.toml constraints.txt scripts/setup.sh
	bash scripts/setup.sh
	touch $(STAMP)

services: setup
	$(BIN)/newskg services up
	$(BIN)/newskg services status

demo: setup
	bash scripts/demo.sh

test: setup
	$(BIN)/python -m pytest

test-unit: setup
	$(BIN)/python -m pytest tests/unit

bench: setup
	$(BIN)/python -m bench.broker
	$(BIN)/python -m bench.ingest
	$(BIN)/python -m bench.extract
	$(BIN)/python -m bench.graph
	$(BIN)/python -m bench.qa

lint: setup
	$(BIN)/ruff check .

down:
	$(BIN)/newskg services down

clean: down
	rm -rf .newskg
