"""``runtop ls`` in a narrow terminal keeps STATUS, the run and the numbers, the names and
the start giving way first; a pipe gets every line whole, whatever the terminal."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from rich.cells import cell_len

from ledger_reader import RunSummary, scan_summaries
from tests.conftest import FIXTURES, REPO
from tests.terminal import RUNTOP, Terminal
from tui.commands.ls import add_totals
from tui.commands.runs_table import runs_table

pytestmark = pytest.mark.timeout(60)

NUMBERS = ("EVENTS", "TOKENS", "COST", "DAMAGED")


def samples() -> tuple[list[RunSummary], set[str]]:
    summaries, errors = scan_summaries([FIXTURES])
    assert not errors, errors
    summaries.sort(key=lambda summary: summary.started or 0.0, reverse=True)
    return summaries, add_totals(summaries)


@pytest.mark.parametrize("width", [80, 90, 100, 120, 140])
def test_the_numbers_stay_and_every_line_fits(width: int) -> None:
    """At 80 columns the table was cut after SKILL / AGENT: no number showed."""
    summaries, parents = samples()
    lines = runs_table(summaries, parents, width=width).plain.splitlines()
    header = lines[0]
    for title in ("STATUS", "RUN ID", *NUMBERS):
        assert title in header, header
    assert "TIME" in header or "DURATION" in header, header
    spent = next(line for line in lines if "9c2e7b3d8a60" in line)
    for number in ("22", "2.9k", "$0.0102"):
        assert number in spent.split(), spent
    assert cell_len(header) <= width, header
    if "NOTE" not in header:  # a note runs on past the edge, where the terminal cuts it
        assert all(cell_len(line) <= width for line in lines), lines


def test_the_least_useful_give_way_first() -> None:
    summaries, parents = samples()

    def header(width: int) -> str:
        return runs_table(summaries, parents, width=width).plain.splitlines()[0]

    assert "STARTED (UTC)" in header(400)
    assert "DURATION" in header(400)
    assert "STARTED UTC" in header(120), header(120)  # its year and seconds gone
    assert "NOTE" in header(100), header(100)  # the start goes before the note
    assert "STARTED" not in header(100), header(100)
    assert "NOTE" not in header(80), header(80)
    assert "SKILL" in header(80), header(80)
    full = runs_table(summaries, parents, width=400).plain
    assert "run_20261128T143000012_4f1a9c2e7b3d8a60" in full
    assert "…9c2e7b3d8a60" in runs_table(summaries, parents, width=120).plain


def test_without_a_width_every_line_is_whole() -> None:
    summaries, parents = samples()
    assert runs_table(summaries, parents).plain == runs_table(summaries, parents, width=1000).plain


def test_a_terminal_of_80_columns_shows_the_numbers(tmp_path: Path) -> None:
    with Terminal([*RUNTOP, "ls", str(FIXTURES)], size=(80, 24), home=tmp_path) as tty:
        assert tty.wait_exit() == 0
        shown = tty.text()
    assert "$0.0102" in shown, shown
    assert "…9c2e7b3d8a60" in shown, shown
    assert all(cell_len(line) <= 80 for line in shown.splitlines()), shown


def test_columns_says_the_width_and_a_pipe_gets_every_line_whole(tmp_path: Path) -> None:
    """``$COLUMNS`` is the terminal's width where it is set; a pipe ignores it."""
    env = {"COLUMNS": "90", "RUNTOP_NO_CACHE": "1"}
    with Terminal([*RUNTOP, "ls", str(FIXTURES)], size=(160, 24), home=tmp_path, env=env) as tty:
        assert tty.wait_exit() == 0
        lines = tty.text().splitlines()
    assert max(cell_len(line) for line in lines) <= 90, lines
    assert "$0.0102" in "\n".join(lines)

    def piped(**extra: str) -> str:
        environment = {**os.environ, "RUNTOP_HOME": str(tmp_path / "home"), **extra}
        ran = subprocess.run(
            [*RUNTOP, "ls", str(FIXTURES)],
            capture_output=True,
            text=True,
            env=environment,
            cwd=REPO,
            timeout=30,
            check=True,
        )
        return ran.stdout

    whole = piped()
    assert "run_20261128T143000012_4f1a9c2e7b3d8a60" in whole
    assert "timed out waiting for the condition" in whole
    assert piped(COLUMNS="80") == whole
