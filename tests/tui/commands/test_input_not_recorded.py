"""A run whose ledger does not say its input reads `input not recorded`, never `input null`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO
from tests.tui.test_interaction import screen_lines
from tests.tui_support import events_read, loaded, open_run, sample_app, write_waiting_run


async def test_the_run_screen_says_the_input_was_not_recorded(fixtures: Path) -> None:
    run_id = write_waiting_run(fixtures)  # its run_started has a skill and no input
    app = sample_app(fixtures)
    async with app.run_test(size=(160, 48)) as pilot:
        await loaded(pilot, 7)
        await open_run(pilot, run_id)
        await events_read(pilot, 1)
        await pilot.pause()
        shown = "\n".join(screen_lines(app))
        assert "input null" not in shown
        header = next(line for line in screen_lines(app) if "samples" in line)
        assert "input not recorded" in header
        started = next(line for line in screen_lines(app) if "▶ started ship" in line)
        assert "input not recorded" in started


def show(ledger: Path) -> list[str]:
    """``runtop show LEDGER``'s lines."""
    return subprocess.run(
        [sys.executable, "-m", "tui.cli", "show", str(ledger)],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=30,
        check=True,
    ).stdout.splitlines()


def test_show_says_the_input_was_not_recorded(fixtures: Path) -> None:
    run_id = write_waiting_run(fixtures)
    first = show(fixtures / f"{run_id}.jsonl")[0]
    assert first.endswith("started ship input not recorded"), first
    recorded = next(path for path in fixtures.glob("*.jsonl") if "143000012" in path.name)
    assert " input {" in show(recorded)[0]  # a recorded input is still its JSON
