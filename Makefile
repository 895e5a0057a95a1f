# Two commands on a fresh machine with only python3 and make:
#   make demo   - create .venv, install, fit a sparse GP on a shipped dataset with the defaults (the fit
#                 chooses m), print a results table
#   make test   - create .venv, install with dev dependencies, run the test suite's fast tier
#   make lint   - ruff (lint + format) and mypy; CI runs it before make test
#   make test-slow - the slow tier (end-to-end runs, marked `slow`); CI runs it after make test
#   make docs   - the documentation site (user guide, API reference, gallery) into docs/_build/html
#   make docs-check - every internal link and image of the built site resolves
#   make dist   - the wheel and sdist into dist/, checked by twine
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev
STAMP_DOCS := $(VENV)/.installed-docs

.PHONY: demo test test-slow test-all lint install dev clean bench anchors data-check docs docs-check dist

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# uv installs the pinned dependencies in parallel (a fresh install in seconds instead of about a minute with
# pip, BENCHMARKS.md "The test suite"); where no uv wheel exists for the platform, pip does the same install.
UV_VERSION := 0.9.5
INSTALL = { $(BIN)/python -m pip install --quiet "uv==$(UV_VERSION)" && \
	$(BIN)/uv pip install --quiet --python $(BIN)/python $(1); } || $(BIN)/python -m pip install --quiet --no-compile $(1)

$(STAMP_RUN): $(BIN)/python pyproject.toml
	$(call INSTALL,-e .)
	touch $@

# One resolution for the package and its dev extras (a fresh `make test` does not install twice). Then the
# bytecode of the libraries the tests import, compiled once on every core: without it each test process
# compiles the same modules from source as it first imports them (BENCHMARKS.md, "The test suite").
TEST_IMPORTS := jax jaxlib ml_dtypes opt_einsum numpy scipy sklearn joblib pandas dateutil pyarrow narwhals hypothesis _pytest pluggy xdist execnet rich pygments mpmath tqdm
$(STAMP_DEV): $(BIN)/python pyproject.toml
	$(call INSTALL,-e ".[dev]")
	SITE=$$($(BIN)/python -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") && \
	$(BIN)/python -m compileall -q -j 0 -x '/tests/' $(foreach p,$(TEST_IMPORTS),$$SITE/$(p)) > /dev/null
	touch $(STAMP_RUN) $@

$(STAMP_DOCS): $(BIN)/python pyproject.toml
	$(call INSTALL,-e ".[docs]")
	touch $(STAMP_RUN) $@

install: $(STAMP_RUN)

dev: $(STAMP_DEV)

demo: $(STAMP_RUN)
	$(BIN)/sparsegp fit --dataset abalone --split 0 --model vfe --out demo-output/abalone-vfe.npz
	@echo "Side by side with GPflow and GPyTorch on the same protocol: make dev anchors && $(BIN)/python -m benchmarks sparse_suite K10 --m 128 512"

# One test process per core (xdist), each with single-threaded BLAS: two processes of multi-threaded
# OpenBLAS on two cores spend much of their time spinning (BENCHMARKS.md, "The test suite").
# The tests write Python's bytecode cache even where PYTHONDONTWRITEBYTECODE is set: without it every test
# process (the xdist workers, the CLI's subprocesses) compiles the package and its dependencies from source.
# The fast tier is every test not marked `slow`; the slow tier holds the end-to-end runs (the papers' quick
# reproductions, the Dask cluster, scikit-learn's estimator checks, whole-fit equivalences). Both run in CI.
# The fast tier hands out whole files (a file's tests share their compiled programs in one process; test by
# test, both workers compiled many of the same programs: about 10 s more of the fast tier, BENCHMARKS.md "The
# test suite"); the slow tier keeps its groups across files (one Dask cluster at a time).
PYTEST := env -u PYTHONDONTWRITEBYTECODE OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(BIN)/python -m pytest -n auto --durations=20
test: $(STAMP_DEV)
	$(PYTEST) --dist loadfile -m "not slow"

test-slow: $(STAMP_DEV)
	$(PYTEST) --dist loadgroup -m slow

test-all: $(STAMP_DEV) lint
	$(PYTEST) --dist loadgroup

# Sphinx with warnings as errors; every gallery example runs (sphinx-gallery). The site opens from disk.
docs: $(STAMP_DOCS)
	cd docs && MPLBACKEND=Agg ../$(BIN)/sphinx-build -W --keep-going -b html . _build/html
	@echo "open docs/_build/html/index.html"

docs-check:
	$(BIN)/python docs/check_links.py docs/_build/html

dist: $(STAMP_DEV)
	rm -rf dist
	$(BIN)/python -m build --no-isolation --outdir dist .
	$(BIN)/twine check dist/*

# ruff (lint + format) and mypy on the package; CI runs them before the tests (.ci/run)
lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks docs examples
	$(BIN)/ruff format --check src tests benchmarks docs examples
	$(BIN)/mypy

bench: $(STAMP_DEV)
	$(BIN)/python -m benchmarks run exact-vs-sklearn
	$(BIN)/python -m benchmarks flop_floor
	$(BIN)/python -m benchmarks scale_memory

# The reference libraries for the comparison benchmarks live in their own environment:
# GPflow 2.11 needs NumPy < 2, which cannot share sparsegp's pinned NumPy 2.
anchors: .venv-anchors/.installed
.venv-anchors/.installed:
	$(PYTHON) -m venv .venv-anchors
	.venv-anchors/bin/python -m pip install --quiet "numpy==1.26.4" "scipy==1.17.1" "gpflow==2.11.2" \
		"tensorflow==2.21.0" "tensorflow-probability==0.25.0" "tf_keras==2.21.0" "torch==2.13.0" "gpytorch==1.15.2" \
		"linear_operator==0.6.1"
	touch $@

# The shipped data against the manifest of the sources in ../shared/data (provenance; the package and
# its tests never read ../shared).
data-check:
	cd src/sparsegp/datasets/data && sha256sum --quiet -c ../../../../../shared/data/MANIFEST.sha256 && echo "shipped data match ../shared/data"

clean:
	rm -rf $(VENV) .venv-anchors demo-output bench-output dist docs/_build docs/gallery docs/reproductions docs/api/generated
