# Two commands for a fresh clone:  `make demo` runs the main demo, `make test` runs every test.
# Each creates .venv and installs what it needs (Python packages from pyproject.toml extras;
# the OS `graphviz` package via apt where we can, else a message saying how).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: demo test bench graphviz clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# PYTHONWARNINGS=ignore: setuptools' notes about editable installs are noise for a user.
$(VENV)/.demo: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install -q -e ".[demo]"
	touch $@

$(VENV)/.test: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install -q -e ".[test]"
	touch $@

graphviz:
	@bash scripts/ensure-graphviz

demo: $(VENV)/.demo graphviz
	$(BIN)/micrograd demo

# ruff runs once, as tests/test_lint.py
test: $(VENV)/.test graphviz
	$(BIN)/python -m pytest

bench: $(VENV)/.test
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) .pytest_cache micrograd-demo
