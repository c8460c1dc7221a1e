# The two commands of the README's quick start: `make run` and `make test`.
# Each makes .venv on first use: `make run` installs runtop alone (what the demo
# needs), `make test` adds its test extra (the frameworks, Ray, the linters).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
HASH := $(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
RUN_STAMP := $(VENV)/.installed-run-$(HASH)
TEST_STAMP := $(VENV)/.installed-test-$(HASH)
LEDGERS ?= tui/samples

.PHONY: setup run ls test soak lint clean screenshots snapshots docs

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# constraints.txt pins what was tested (the snapshot tests draw with this Textual).
$(RUN_STAMP): pyproject.toml constraints.txt | $(BIN)/python
	# A .venv made before runtop was named runtop-agents holds the old name's install.
	$(BIN)/python -m pip uninstall --quiet --yes runtop 2>/dev/null || true
	$(BIN)/python -m pip install --quiet -c constraints.txt -e .
	# An editable install writes no bytecode, and PYTHONDONTWRITEBYTECODE (set on
	# some machines) keeps Python from writing it: every launch would compile ~50 modules.
	$(BIN)/python -m compileall -q inspector ledger_reader run_manager tui runtop
	rm -f $(VENV)/.installed-*
	touch $@

$(TEST_STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	touch $@

setup: $(TEST_STAMP)

# The main job: simulated agents in an embedded run manager, watched in the TUI.
run: $(RUN_STAMP)
	$(BIN)/runtop demo

# The sample ledgers, listed without the TUI.
ls: $(RUN_STAMP)
	$(BIN)/runtop ls $(LEDGERS)

lint: $(TEST_STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

# Everything but the soaks (pyproject.toml deselects the tests marked soak), two workers
# a core: most tests wait on a frame, a timer or a process, and with one worker a core
# the cores sat idle half the time. The Ray tests stay together in one worker, which
# starts one local cluster.
WORKERS ?= $(shell echo $$(( $$(nproc) * 2 )))
test: lint
	$(BIN)/pytest -n $(WORKERS) --dist loadgroup

# The long soaks: hundreds of launches and runs with random faults, counting failures.
soak: $(TEST_STAMP)
	$(BIN)/pytest -m soak

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache build

# The API reference, from the docstrings (pdoc), in build/api/index.html. A warning or a
# public name without a docstring fails it; make test builds it too (test_api_reference).
docs: $(TEST_STAMP)
	$(BIN)/python docs/api_reference.py build/api

# The README's screenshots: scripted scenarios, saved as SVG by the app itself.
screenshots: $(RUN_STAMP)
	$(BIN)/python -m tui.screenshots screenshots

# Redraw the SVG snapshot tests after a deliberate change to what the app shows.
snapshots: $(TEST_STAMP)
	$(BIN)/pytest -n 2 tests/tui/test_snapshots.py tests/tui/test_conversation_snapshots.py tests/tui/test_timeline_snapshots.py --snapshot-update
