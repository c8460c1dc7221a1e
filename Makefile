# The two commands of the README's quick start: `make run` and `make test`.
# Each makes .venv and installs the project into it on first use.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)
LEDGERS ?= ../shared/fixtures/ledgers

.PHONY: setup run ls test lint bench clean screenshots snapshots

# constraints.txt pins what was tested (the snapshot tests draw with this Textual).
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[test]'
	# An editable install writes no bytecode, and PYTHONDONTWRITEBYTECODE (set on
	# some machines) keeps Python from writing it: every launch would compile ~50 modules.
	$(BIN)/python -m compileall -q inspector ledger_reader run_manager tui
	rm -f $(VENV)/.installed-*
	touch $@

setup: $(STAMP)

# The main job: simulated agents in an embedded run manager, watched in the TUI.
run: $(STAMP)
	$(BIN)/runtop demo

# The sample ledgers, listed without the TUI.
ls: $(STAMP)
	$(BIN)/runtop ls $(LEDGERS)

lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: lint
	$(BIN)/pytest

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache

# The README's screenshots: scripted scenarios, saved as SVG by the app itself.
screenshots: $(STAMP)
	$(BIN)/python -m tui.screenshots screenshots

# Redraw the SVG snapshot tests after a deliberate change to what the app shows.
snapshots: $(STAMP)
	$(BIN)/pytest tests/tui/test_snapshots.py --snapshot-update
