# The two quick-start commands: `make demo` and `make test`. Each builds .venv when missing.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
# torch==2.13.0 is a CPU build on local disk; any other spec would download a multi-GB CUDA build.
TORCH  := torch==2.13.0

.PHONY: demo test test-slow fuzz kill-tests docs api lint bench reproduce clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Stamps depend on pyproject.toml so that a changed dependency list reinstalls.
$(VENV)/.runtime-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet $(TORCH)
	$(BIN)/python -m pip install --quiet -e ".[test,torch,dev,dask,docs]"
	touch $@ $(VENV)/.runtime-installed

demo: $(VENV)/.runtime-installed
	$(BIN)/fairot demo --out fairot-demo

# tests/reporting renders report.html in headless Chromium. On a fresh Debian machine as root (CI)
# install it once; elsewhere this does nothing and that test skips, saying why.
$(VENV)/.chromium: | $(BIN)/python
	command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; } || true
	touch $@

test: $(VENV)/.test-installed $(VENV)/.chromium
	$(BIN)/python -m pytest -q --durations=30

# The slow tier (DEVELOPERS.md, "The test suite"): the papers' full studies, the variants of the
# kill-at-every-write tests and the checks that start fresh interpreters; make test leaves them out.
test-slow: $(VENV)/.test-installed $(VENV)/.chromium
	$(BIN)/python -m pytest -q -m slow --durations=30

# The hypothesis fuzz of every public boundary with a large budget (make test runs a small one).
fuzz: $(VENV)/.test-installed
	HYPOTHESIS_PROFILE=fuzz $(BIN)/python -m pytest -q -m fuzz tests

# The API reference from the docstrings (Sphinx + numpydoc); warnings are errors.
docs: $(VENV)/.test-installed
	$(BIN)/python -m sphinx -W --keep-going -q -b html docs/api build/docs
	@echo "API reference: build/docs/index.html"

# Every kill-at-every-write test of the output folders, the variants of the switch included
# (make test runs the main three: audit, mitigate, monitor).
kill-tests: $(VENV)/.test-installed
	$(BIN)/python -m pytest -q -m "slow or not slow" tests/cli/test_outdir.py

# docs/api.md: every public name with its signature (tests/test_api_reference.py checks it).
api: $(VENV)/.test-installed
	$(BIN)/python -m tests.api_reference --write

lint: $(VENV)/.test-installed
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks
	$(BIN)/codespell src tests docs README.md

bench: $(VENV)/.test-installed
	for f in benchmarks/bench_*.py; do $(BIN)/python $$f || exit 1; done

clean:
	rm -rf $(VENV) fairot-demo build dist src/*.egg-info
