# Two commands for a fresh clone:  `make demo` runs the main demo, `make test` runs every test.
# Each creates .venv and installs what it needs (Python packages from pyproject.toml extras;
# the OS `graphviz` package via apt where we can, else a message saying how).
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

# makemore's names.txt (never committed): the tests and benchmarks read the copy beside the
# project where it is (tests/conftest.py looks there too); elsewhere micrograd downloads it once.
SHARED_NAMES := $(abspath ../shared/data/names.txt)
ifneq ($(wildcard $(SHARED_NAMES)),)
export MICROGRAD_NAMES_FILE ?= $(SHARED_NAMES)
endif

.PHONY: demo test test-fast dist dist-pure bench graphviz chromium npm eslint bubblewrap playground clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# PYTHONWARNINGS=ignore: setuptools' notes about editable installs are noise for a user.
$(VENV)/.demo: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install -q -e ".[demo]"
	touch $@

# (the editable install builds the engine's compiled core in place: setup.py, cvalue.c)
# (the test group: pyproject.toml's [dependency-groups], which pip reads from 25.1 on)
$(VENV)/.test: pyproject.toml setup.py micrograd/core/cvalue.c | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install -q -e . --group test
	touch $@

graphviz:
	@bash scripts/ensure-graphviz

# Debian's Chromium, which the playground's browser tests drive through Playwright.
chromium:
	@bash scripts/ensure-chromium

# npm, which fetches Pyodide for `micrograd site` (the static site) once; its tests build the site.
npm:
	@bash scripts/ensure-npm

# ESLint, the JavaScript linter tests/test_lint.py runs over the playground's static JS: the
# versions package-lock.json pins, into node_modules/ (npm ci, once; offline after).
eslint: npm
	@bash scripts/ensure-eslint

# bubblewrap, the sandbox `micrograd grade` runs learners' notebooks in (Linux).
bubblewrap:
	@bash scripts/ensure-bubblewrap

# `make test` (and so .ci/run) installs them as it installs graphviz.
test: chromium npm eslint bubblewrap

demo: $(VENV)/.demo graphviz
	$(BIN)/micrograd demo

# ruff runs once, as tests/test_lint.py. Then the engine's tests again on the pure engine (the
# reference, what Pyodide runs), as the compiled core is chosen wherever it is built.
ENGINE_TESTS := tests/test_engine.py tests/test_engine_file.py tests/test_nn.py \
	tests/test_op_tables.py tests/test_jit.py tests/test_check.py tests/test_gpt.py \
	tests/test_compiled.py tests/test_collector.py
# --- the suite in parallel (issue 57): two workers a core (pytest-xdist; tests/conftest.py's
# pytest_xdist_auto_num_workers: the tests mostly wait), each test file on one worker (--dist
# loadfile: a file's tests share its browser, its servers and its folders); the site, the course
# and the wheel are built once for all workers (tests/support/shared_build.py). The 20 slowest tests are
# listed at the end (CONTRIBUTING.md says why each is slow). `make test PYTEST_PARALLEL=` runs in
# one process.
PYTEST_PARALLEL ?= -n auto --dist loadfile --no-loadscope-reorder
# Python's byte-code caches written (into __pycache__/, which git ignores) even where the
# environment turns them off (PYTHONDONTWRITEBYTECODE): without them every worker parsed and
# rewrote the 120 test files' asserts anew (10 s of CPU each), and every kernel, grader and
# command the tests start compiled micrograd again.
test test-fast: export PYTHONDONTWRITEBYTECODE :=
test: $(VENV)/.test graphviz
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) --durations=20
	MICROGRAD_PURE_PYTHON=1 $(BIN)/python -m pytest -q $(PYTEST_PARALLEL) $(ENGINE_TESTS)

# The release: the wheel and the sdist in dist/, checked as PyPI reads them (twine) and for a
# wheel's usual mistakes (check-wheel-contents); .github/workflows/release.yml runs this too.
$(VENV)/.release: pyproject.toml | $(BIN)/python
	PYTHONWARNINGS=ignore $(BIN)/python -m pip install -q -e . --group release
	touch $@

# `dist-pure`: the sdist and the pure engine's wheel (py3-none-any: Pyodide's, and any platform
# without a wheel of its own); `dist` adds this machine's platform wheel, the compiled core's
# (release.yml builds PyPI's platform wheels with cibuildwheel: pyproject.toml's [tool.cibuildwheel]).
dist-pure: $(VENV)/.release
	rm -rf dist build micrograd_plus.egg-info  # a stale file list would ship old files
	MICROGRAD_PURE_PYTHON=1 $(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*
	$(BIN)/check-wheel-contents dist/*.whl

dist: dist-pure
	rm -rf build micrograd_plus.egg-info
	env -u MICROGRAD_PURE_PYTHON $(BIN)/python -m build --wheel --outdir dist .
	rm -rf build micrograd_plus.egg-info
	$(BIN)/twine check --strict dist/*
	$(BIN)/check-wheel-contents dist/*.whl

# The playground: a local web page (no extra packages needed); Ctrl-C stops it.
playground: $(VENV)/.demo
	$(BIN)/micrograd playground

# The fast tier, while you work: every test that needs no browser, Jupyter, sandbox or long
# build (markers in pyproject.toml; tests/conftest.py). `make test` runs everything, as CI does.
FAST := not browser and not jupyter and not sandbox and not slow
test-fast: $(VENV)/.test graphviz eslint
	$(BIN)/python -m pytest $(PYTEST_PARALLEL) -m "$(FAST)"

# Every benchmark in turn, each writing its own section of benchmarks/RESULTS.md (its figures, the
# command, the date, the load, the Python: benchmarks/results.py), with the options its figures
# there were measured with. `make bench BENCH="run bench_engine"` runs some. One that cannot run
# here (no Chromium: `make chromium`; bench_gpt without makemore's names.txt) says why and writes
# nothing, and the rest go on. All of them take over an hour on a 2-core machine.
BENCH ?= run bench_engine bench_gpt bench_jit bench_explorer_page bench_playground bench_reach \
	load_faults bench_site bench_course bench_grade bench_gpt_engines bench_site_gpt \
	bench_playground_gpt bench_playground_health bench_site_health bench_trim
ARGS_bench_engine     := --rounds 3 --steps 15
ARGS_bench_playground := --browser --seconds 5 --eager-seconds 5
ARGS_load_faults      := --tabs 30 --minutes 10 --max-sessions 20
ARGS_bench_site       := --seconds 10 --visits 3
ARGS_bench_grade      := --learners 20 --jobs 2
ARGS_bench_gpt_engines := --seconds 10 --pyodide --chromium
# a section that is another run of a script: its script, and its options
SCRIPT_bench_site_gpt := bench_site
ARGS_bench_site_gpt   := --gpt --seconds 10
SCRIPT_bench_playground_gpt := bench_playground
ARGS_bench_playground_gpt   := --gpt --seconds 10
SCRIPT_bench_playground_health := bench_playground
ARGS_bench_playground_health   := --health 5 --seconds 6
SCRIPT_bench_site_health := bench_site
ARGS_bench_site_health   := --health --seconds 6

define run-bench
	-$(BIN)/python benchmarks/$(or $(SCRIPT_$(1)),$(1)).py $(ARGS_$(1))

endef

bench: $(VENV)/.test
	$(foreach b,$(BENCH),$(call run-bench,$(b)))

clean:
	rm -rf $(VENV) .pytest_cache micrograd-demo node_modules
