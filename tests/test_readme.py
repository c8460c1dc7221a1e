"""The README's examples are true of the sample ledgers it points at.

A walk found ``/error:timeout`` (then the README's example) finding nothing
on the samples, whose failed run "timed out". Each filter of the keys
table is applied here to the samples, and the ``runtop ls`` shown is the
one printed.
"""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

from inspector import LedgerDirectorySource, RunFilter, RunStore
from tests.conftest import FIXTURES, REPO
from tests.tui_support import FROZEN, age
from tui.cli import main

pytestmark = pytest.mark.timeout(60)

README = (REPO / "README.md").read_text()


def filter_examples() -> list[str]:
    """The filters the keys table's ``/`` row shows (a lone word, such as the ledger's
    spelling ``ok`` of a status, is a word of the explanation, not a filter)."""
    row = next(line for line in README.splitlines() if line.startswith("| `/` | filter"))
    examples = re.findall(r"`([^`]+)`", row)[1:]  # the key itself first
    return [text for text in examples if ":" in text or text[0] in "/-" or text == "deploy"]


@pytest.fixture
def ledgers(tmp_path: Path) -> Path:
    """The samples, in a directory named as in the README (its source is ``ledgers``)."""
    target = tmp_path / "ledgers"
    shutil.copytree(FIXTURES, target)
    for path in target.iterdir():
        path.chmod(0o600)
    age(target)
    return target


def test_the_readme_shows_filters() -> None:
    examples = filter_examples()
    assert 'error:"timed out"' in examples
    assert len(examples) >= 10, examples


async def test_every_filter_in_the_readme_finds_a_sample_run(ledgers: Path) -> None:
    async with RunStore(flush_interval=0.005) as store:
        store.add_source(LedgerDirectorySource(ledgers))
        changes = store.changes()
        while len(store.snapshot().runs) < 6:
            await anext(changes)
        runs = store.snapshot()
        for example in filter_examples():
            # since:1h at five minutes after the samples ran, as one watching them would
            found = runs.filtered(RunFilter.parse(example, now=FROZEN))
            assert found, example
            # it filters something out (but the samples are of one source, and an hour)
            if not re.fullmatch(r"source:.*|since:\d+[smhd]", example):
                assert len(found) < len(runs.runs), example


def test_the_readme_ls_is_what_ls_prints(ledgers: Path) -> None:
    shown = README.split("$ runtop ls ../shared/fixtures/ledgers\n", 1)[1].split("```", 1)[0]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["ls", str(ledgers)]) == 0
    printed = [line.rstrip() for line in out.getvalue().splitlines()]
    assert [line.rstrip() for line in shown.splitlines()] == printed
