# Fresh machine: `make run` (training on the embedded defaults) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-stamp

# llama-cpp-python is built from source for a portable CPU level (no Linux wheel on PyPI; a native
# build can crash on other CPUs), cached by version and flags: see docs/installing.md.
LLAMA_VERSION    := 0.3.36
LLAMA_CMAKE_ARGS ?= $(if $(filter x86_64 amd64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF,)
WHEELHOUSE       ?= $(HOME)/.cache/fakegang/wheels/llama-cpp-python-$(LLAMA_VERSION)-$(shell printf '%s' '$(LLAMA_CMAKE_ARGS)' | cksum | cut -d' ' -f1)

# Schemathesis (the API contract test) has its own venv: its releases need a newer jsonschema-rs
# than the Studio CLI accepts (docs/installing.md).
SCHEMATHESIS_VERSION := 4.32.5
ST_VENV := $(VENV)/tools/schemathesis

.PHONY: setup run test test-slow test-all bench lint docs render-docs llama-wheel browser

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
	$(PY) -m pip install -q -e ".[dev,local,report,ray,docs]"
	test -x $(ST_VENV)/bin/st || { python3 -m venv $(ST_VENV) && \
	  $(ST_VENV)/bin/python -m pip install -q "schemathesis==$(SCHEMATHESIS_VERSION)"; }
	touch $(STAMP)

run: setup
	$(PY) train.py

# The tests run on two pytest-xdist workers (one per core; one on a 1-core machine), a whole file
# per worker (--dist loadfile), so a module's expensive fixture (a trained database, a server) is
# built once. Not loadgroup: with pytest 9.2, xdist 3.8's loadgroup ignores xdist_group marks
# (pytest-dev/pytest-xdist#1386). Serially, e.g. to debug: `make test XDIST="-n 0"`. A bare
# `pytest` is serial (no -n in addopts: one file run by hand does not pay the workers' start-up).
XDIST ?= -n auto --maxprocesses 2 --dist loadfile

test: setup
	AWS_EC2_METADATA_DISABLED=true $(PY) -m pytest -q $(XDIST)

# pytest exits 5 when no test carries the marker; that is not a failure here.
test-slow: setup
	AWS_EC2_METADATA_DISABLED=true $(PY) -m pytest -q -m slow $(XDIST); rc=$$?; [ $$rc -eq 5 ] && rc=0; exit $$rc

test-all: test test-slow

bench: setup
	$(PY) bench/suite/run_all.py

# The documentation site, strict (a broken link or a page missing from nav fails), into site/.
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

# Re-render what the docs take from the code and bench/results/ (figures, campaign pictures, the
# CLI and HTTP reference pages); `make test` fails while any of it is stale (tests/docs).
render-docs: setup
	$(PY) bench/docs/render_docs.py

lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
