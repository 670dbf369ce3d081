# Two entry points that do all set-up on a fresh machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-all lint install clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(STAMP): $(PY) pyproject.toml
	$(PY) -m pip install -q torch==2.13.0 triton==3.9.0
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/kernelcraft generate examples/problems/layernorm.py --target sm_90,gfx942 -o out

test: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m pytest -q -n 2

# the tests with every suite problem judged (make test judges a stratified quarter of them)
test-all: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	KERNELCRAFT_FULL_SUITE=1 $(PY) -m pytest -q -n 2

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks

clean:
	rm -rf $(VENV) build *.egg-info src/*.egg-info
