# Fresh machine: `make run` (training on the embedded defaults) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

# llama-cpp-python is built from source (no Linux wheel on PyPI; 4-15 min on 2 cores), for a
# portable CPU level instead of -march=native: a native build compiles in whatever the build CPU
# has (AMX-INT8 on recent Xeons, whose matmul path segfaults where the kernel does not grant AMX,
# as in this sandbox), and pip's wheel cache would hand that wheel to any other CPU later.
# On x86-64 that level is x86-64-v3 (AVX2, FMA, F16C, BMI2); elsewhere llama.cpp's defaults.
# The built wheel is kept in a wheelhouse named by version and flags, so a second clone (or CI)
# on the same machine installs it in seconds and a change of flags never reuses a stale build.
LLAMA_VERSION    := 0.3.36
LLAMA_CMAKE_ARGS ?= $(if $(filter x86_64 amd64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF,)
WHEELHOUSE       ?= $(HOME)/.cache/fakegang/wheels/llama-cpp-python-$(LLAMA_VERSION)-$(shell printf '%s' '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)

# Schemathesis (the API contract test, tests/environment/test_contract.py) lives in its own venv inside the
# project's: its releases need jsonschema-rs >= 0.60, langgraph-api (the Studio CLI, dev extra)
# pins jsonschema-rs < 0.45, and the older Schemathesis releases that would fit break on current
# Hypothesis. It only talks HTTP to the server, so it needs nothing else of ours.
SCHEMATHESIS_VERSION := 4.32.5
ST_VENV := $(VENV)/tools/schemathesis

.PHONY: setup run test test-slow test-all bench lint llama-wheel browser

setup: $(STAMP) browser

# The viewer's browser tests (tests/view) drive Debian's headless Chromium with Playwright; no
# browser is downloaded by Playwright itself. Installing a Debian package needs root: elsewhere
# the tests skip and say so.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -q && apt-get install -y -q chromium; \
	  else echo "note: the browser tests (tests/view) need Debian's chromium; as root: apt-get install -y chromium (they skip without it)"; fi; }

llama-wheel:
	@ls $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python $(LLAMA_VERSION) ($(or $(LLAMA_CMAKE_ARGS),default flags)); 4-15 min on 2 cores"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip wheel -q --no-deps --no-cache-dir \
	    --no-binary llama-cpp-python -w $(WHEELHOUSE) llama-cpp-python==$(LLAMA_VERSION); }

$(STAMP): pyproject.toml Makefile
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(MAKE) --no-print-directory llama-wheel
	$(PY) -m pip install -q --force-reinstall --no-deps $(WHEELHOUSE)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PY) -m pip install -q -e ".[dev,local,report,ray]"
	test -x $(ST_VENV)/bin/st || { python3 -m venv $(ST_VENV) && \
	  $(ST_VENV)/bin/python -m pip install -q "schemathesis==$(SCHEMATHESIS_VERSION)"; }
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
