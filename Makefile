# serq: `make run` (install and run the flagship example) and `make test` (install the test
# extras and run the test suite). Both create .venv on first use and reinstall only when
# pyproject.toml, setup.py or a module that the install compiles changes (stamp files in .venv):
# the install compiles the simulator with Cython when a C compiler is there (setup.py), and a
# compiled module older than its source is not used (serq/compiled.py).

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip --disable-pip-version-check --quiet
SHARED ?= ../shared
# the sources that the install compiles (serq/compiled.py lists them)
COMPILED := $(shell $(PYTHON) serq/compiled.py)
# 1 when a C compiler works with Python's headers: the install then compiled the engine, and
# the tests check that it is the one in use (tests/engines)
PYINC  := $(shell $(PYTHON) -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
HAVE_CC := $(shell printf '\043include <Python.h>\n' | $${CC:-cc} -I'$(PYINC)' -x c -c -o /dev/null - >/dev/null 2>&1 && echo 1)

.PHONY: run test test-slow conformance bench drt clean

run: $(VENV)/.installed
	$(BIN)/serq check examples/flagship.sq
	$(BIN)/serq run examples/flagship.sq

test: $(VENV)/.installed-test
	SERQ_EXPECT_COMPILED=$(HAVE_CC) $(BIN)/python -m pytest -q

# the long property sweeps (deselected by default)
test-slow: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q -m slow

# the conformance checker itself, on every v0.1.2 family (compile, errors, load, run, oracle)
conformance: $(VENV)/.installed
	$(BIN)/python $(SHARED)/conformance/check.py

# run speed (events/s on M/M/1), step-engine speed (programs/step_*.sq) and compile time
# (300-line program; exit 1 when it misses its target); all compare with the reference when
# SERQ_REF_PYTHON names a python with pyserq (run and step also find /tmp/refvenv/bin/python)
bench: $(VENV)/.installed
	$(BIN)/python benchmarks/bench_run.py
	$(BIN)/python benchmarks/bench_step.py
	$(BIN)/python benchmarks/bench_compile.py

# differential random testing (formal.md §5): the fixed 200 cases, serq.sim vs serq.ref, and
# the simulator's observations against pyserq 0.1.2's recorded digests (three-way, no oracle run);
# then the 333-session replay of §5.2 under its three costs, with both run times
drt: $(VENV)/.installed
	$(BIN)/serq drt --cases 200
	$(BIN)/serq drt --replay

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml setup.py $(COMPILED) | $(BIN)/python
	$(PIP) install -e .
	@$(BIN)/python -c "import serq.compiled as c; print('serq: engine', c.describe(build=True))"
	@touch $@

$(VENV)/.installed-test: pyproject.toml setup.py $(COMPILED) | $(BIN)/python
	$(PIP) install -e '.[test]'
	@$(BIN)/python -c "import serq.compiled as c; print('serq: engine', c.describe(build=True))"
	@touch $@ $(VENV)/.installed

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis serq/compiled.txt
	find serq -name '*.so' -delete -o -name '*.c' -delete
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
