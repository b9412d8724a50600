# dlvm-mlir: `make demo` and `make test` set everything up in .venv/ and run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
DEPS_STAMP := $(VENV)/.deps-stamp
BUILD_STAMP := $(VENV)/.build-stamp
NATIVE_SOURCES := CMakeLists.txt $(wildcard cmake/*.cmake) $(shell find dialect -type f 2>/dev/null)

.PHONY: all build test lit pytest demo bench docs fuzz clean

all: build

$(PY):
	$(PYTHON) -m venv $(VENV)

# Build requirements (read from pyproject.toml, pinned there), then the
# project's runtime and test/demo extras, at the exact versions of
# constraints.txt. Builds are editable and without
# build isolation so a rebuild after a C++ change takes seconds.
$(DEPS_STAMP): pyproject.toml constraints.txt | $(PY)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -c constraints.txt $$($(PY) -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml','rb'))['build-system']['requires']))")
	$(PIP) install -q -c constraints.txt --no-build-isolation -e ".[test,demo,frameworks]"
	touch $@ $(BUILD_STAMP)

$(BUILD_STAMP): $(DEPS_STAMP) $(NATIVE_SOURCES)
	$(PIP) install -q --no-build-isolation --no-deps -e .
	touch $@

build: $(BUILD_STAMP)

lit: build
	$(VENV)/bin/lit -sv test --order=lexical

# pytest's workers (pytest-xdist): one per core of these 2-core machines halves
# the suite's time (10.7 -> 5.7 min); each worker keeps its own compile cache
TEST_WORKERS ?= 2

pytest: build
	$(PY) -m pytest -q -n $(TEST_WORKERS) test/python

test: build
	$(VENV)/bin/lit -sv test --order=lexical
	$(PY) -m pytest -q -n $(TEST_WORKERS) test/python

# Reference docs are generated from ODS and the pass registry (test/python/test_docs.py checks they are current).
docs: build
	$(PY) -m dlvm_mlir.tools.gendocs docs

demo: build
	$(PY) examples/train_digits.py

# Mutation fuzzing of the whole compiler for 10 minutes (docs/fuzzing.md); results in fuzz-out/.
fuzz: build
	$(PY) -m dlvm_mlir.tools.fuzz --time 600 --seed 1 --out fuzz-out

clean:
	rm -rf build $(VENV)
