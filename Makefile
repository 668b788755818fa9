# Every target creates .venv and installs what it needs; nothing is installed by hand.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SHARED_DATA := $(abspath ../shared/data)
ifneq ($(wildcard $(SHARED_DATA)),)
export DPQUERY_DATA_DIR ?= $(SHARED_DATA)
endif

.PHONY: install test demo bench lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -n 2 -q

demo: $(STAMP)
	$(VENV)/bin/dpquery demo

# Quick mode by default (fewer runs and points); `make bench FULL=1` runs the papers' full
# protocols (hours); `make bench BENCH=dualquery` runs one benchmark.
bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[dev,bench]'
	DPQUERY_BENCH_QUICK=$(if $(FULL),0,1) $(PY) benchmarks/run.py $(BENCH)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/mypy

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache
