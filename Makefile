# The two commands a newcomer needs: `make up` and `make test`.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: up down test lint bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

up: $(STAMP)
	$(BIN)/mini-k8s up --classroom --data-dir .mini-k8s

down: $(STAMP)
	$(BIN)/mini-k8s down --data-dir .mini-k8s

lint: $(STAMP)
	$(BIN)/lint-imports
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q -n 2 --dist loadfile

bench: $(STAMP)
	$(BIN)/python bench/storage.py

clean:
	rm -rf $(VENV) .mini-k8s .pytest_cache .ruff_cache .hypothesis
