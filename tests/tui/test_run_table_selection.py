"""Which run is selected as runs arrive: the top row until the user chooses one, then the
run chosen, wherever it moves.

Walked: plain ``runtop`` read a home's old coding-agent sessions before the newest runs,
and the selection stayed on the first run read, far below the screen, so Enter at once
opened a session from last year and the preview showed it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from inspector import LedgerDirectorySource
from tests.conftest import line
from tests.tui_support import loaded, sample_app, settle, table
from tui.app import RuntopApp

pytestmark = pytest.mark.timeout(60)

NEWER = "run_20261129T064600000_dddd4444dddd4444"
"""Started after every sample: listed above them, newest first."""
NEWEST = "run_20261129T064700000_eeee5555eeee5555"


def write_run(directory: Path, run_id: str, minute: int) -> None:
    started = f"2026-11-29T06:{minute}:00.000000Z"
    ended = f"2026-11-29T06:{minute}:01.000000Z"
    lines = line(1, "run_started", {"skill": "later", "input": "q"}, run_id=run_id, time=started)
    lines += line(2, "run_completed", {"status": "ok"}, run_id=run_id, time=ended)
    (directory / f"{run_id}.jsonl").write_bytes(lines)


def selected(app: RuntopApp) -> str | None:
    run = table(app).selected
    return None if run is None else run.run_id


async def test_until_a_run_is_chosen_the_newest_is_selected(fixtures: Path, tmp_path: Path) -> None:
    later = tmp_path / "later"
    later.mkdir()
    app = sample_app(fixtures, LedgerDirectorySource(later, name="later"))
    async with app.run_test(size=(160, 48)) as pilot:
        rows = await loaded(pilot)
        assert rows.cursor == 0
        write_run(later, NEWER, 46)  # comes in above the run selected, nobody moved
        await settle(pilot, lambda: rows.rows and rows.rows[0].run_id == NEWER, "the newer run")
        await pilot.pause()
        assert rows.cursor == 0
        assert selected(app) == NEWER

        await pilot.press("down", "up")  # chosen: the same row, now the user's
        assert selected(app) == NEWER
        write_run(later, NEWEST, 47)
        await settle(pilot, lambda: rows.rows[0].run_id == NEWEST, "the newest run")
        await pilot.pause()
        assert selected(app) == NEWER
        assert rows.cursor == 1  # it followed its run down a row

        await pilot.press("home")  # the top again: the newest, whichever it comes to be
        assert selected(app) == NEWEST
