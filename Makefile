# Two commands on a fresh machine with only python3 and make:
#   make demo   - create .venv, install, fit a model on a shipped dataset, print a results table
#   make test   - create .venv, install with dev dependencies, run the test suite
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: demo test install dev clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP_RUN): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(STAMP_DEV): $(STAMP_RUN)
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

install: $(STAMP_RUN)

dev: $(STAMP_DEV)

demo: $(STAMP_RUN)
	$(BIN)/sparsegp fit --dataset kin40k --split 0 --n-train 10000 --model vfe --inducing 256 --out demo-output/kin40k-vfe256.npz

test: $(STAMP_DEV)
	$(BIN)/python -m pytest

bench: $(STAMP_DEV)
	$(BIN)/python benchmarks/run.py exact-vs-sklearn

clean:
	rm -rf $(VENV) demo-output bench-output
