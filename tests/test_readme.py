"""The documents' examples are true of the sample ledgers they point at.

Each filter of the keys reference (docs/keys.md) is applied here to the
samples, and must find a run; the ``runtop ls`` and ``runtop show`` the
command line reference (docs/cli.md) shows are what they print.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunFilter, RunStore, RunView
from inspector.content_search import ContentSearch
from inspector.store_state import Snapshot
from tests.conftest import FIXTURES, REPO
from tests.tui_support import FROZEN, age
from tui.cli import main

pytestmark = pytest.mark.timeout(60)

KEYS = (REPO / "docs" / "keys.md").read_text()
CLI = (REPO / "docs" / "cli.md").read_text()


def filter_examples() -> list[str]:
    """The filters the keys table's ``/`` row shows (a lone word, such as the ledger's
    spelling ``ok`` of a status, is a word of the explanation, not a filter)."""
    row = next(line for line in KEYS.splitlines() if line.startswith("| `/` | filter"))
    examples = re.findall(r"`([^`]+)`", row)[1:]  # the key itself first
    return [text for text in examples if ":" in text or text[0] in "/-" or text == "deploy"]


def passing(snapshot: Snapshot, run_filter: RunFilter) -> list[RunView]:
    """The runs ``run_filter`` lets through, ``has:`` searched in their files at once."""
    search = ContentSearch(run_filter.phrases)
    return [
        run
        for run in snapshot.filtered(run_filter)
        if not run_filter.phrases or search.passes(run.summary)
    ]


@pytest.fixture
def ledgers(tmp_path: Path) -> Path:
    """The samples, in a directory named as in the README (its source is ``ledgers``)."""
    target = tmp_path / "ledgers"
    shutil.copytree(FIXTURES, target)
    for path in target.iterdir():
        path.chmod(0o600)
    age(target)
    return target


def test_the_keys_reference_shows_filters() -> None:
    examples = filter_examples()
    assert 'error:"timed out"' in examples
    assert len(examples) >= 10, examples


async def test_every_filter_in_the_keys_reference_finds_a_sample_run(ledgers: Path) -> None:
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(ledgers))
        changes = store.changes()
        while len(store.snapshot().runs) < 6:
            await anext(changes)
        runs = store.snapshot()
        for example in filter_examples():
            # since:1h at five minutes after the samples ran, as one watching them would
            found = passing(runs, RunFilter.parse(example, now=FROZEN))
            assert found, example
            # it filters something out (but the samples are of one source, and an hour)
            if not re.fullmatch(r"source:.*|since:\d+[smhd]", example):
                assert len(found) < len(runs.runs), example


@pytest.mark.parametrize(
    "command",
    [
        "ls ~/.runtop/samples",
        "show run_20261128T143000031_9c8b7a6f5e4d3c2b --from ~/.runtop/samples",
        "show run_20261128T143000012_4f1a9c2e7b3d8a60 --from ~/.runtop/samples --timeline",
        "stats ~/.runtop/samples --by tool",
    ],
)
def test_the_cli_reference_shows_what_runtop_prints(ledgers: Path, command: str) -> None:
    shown = CLI.split(f"$ runtop {command}\n", 1)[1].split("```", 1)[0]
    arguments = command.replace("~/.runtop/samples", str(ledgers)).split()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(arguments) == 0
    printed = [line.rstrip() for line in out.getvalue().splitlines()]
    assert [line.rstrip() for line in shown.splitlines()] == printed
