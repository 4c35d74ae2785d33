# Fresh machine: `make run` (training on the embedded defaults) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

.PHONY: setup run test test-slow test-all bench lint

setup: $(STAMP)

# llama-cpp-python builds from source on a machine without a prebuilt wheel (10-15 min on 2 cores).
$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[dev,local,report]"
	touch $(STAMP)

run: setup
	$(PY) train.py

test: setup
	AWS_EC2_METADATA_DISABLED=true $(PY) -m pytest -q

# pytest exits 5 when no test carries the marker; that is not a failure here.
test-slow: setup
	AWS_EC2_METADATA_DISABLED=true $(PY) -m pytest -q -m slow; rc=$$?; [ $$rc -eq 5 ] && rc=0; exit $$rc

test-all: test test-slow

bench: setup
	$(PY) bench/run_all.py

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
